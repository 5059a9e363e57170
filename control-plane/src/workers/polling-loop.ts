import type { Logger } from '../logging/logger.js';

/** What one pass of a worker did: `idle` sleeps until the next poll or a wake-up; `worked` goes again. */
export type PassResult = 'idle' | 'worked';

export interface PollingLoopOptions {
  name: string;
  pollMs: number;
  log: Logger;
  /** One unit of work; a throw is logged and treated as idle. */
  pass: () => Promise<PassResult>;
}

/**
 * The loop of an in-process worker that leases its work from the store: run passes back to back while
 * there is work, sleep `pollMs` when idle, wake early when told that work was queued, and stop after the
 * pass in hand.
 */
export class PollingLoop {
  private running: Promise<void> | undefined;
  private stopRequested = false;
  private wakeUp: (() => void) | undefined;
  private pendingWake = false;

  constructor(private readonly opts: PollingLoopOptions) {}

  /** True once stop() was called: a long pass should hand its work back at the next safe point. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  start(): void {
    if (this.running) return;
    this.stopRequested = false;
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /** Work was queued: look now instead of at the next poll. */
  wake(): void {
    this.pendingWake = true;
    this.wakeUp?.();
  }

  /** Stops after the pass in hand. */
  async stop(): Promise<void> {
    this.stopRequested = true;
    this.wakeUp?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopRequested) {
      let result: PassResult = 'idle';
      this.pendingWake = false;
      try {
        result = await this.opts.pass();
      } catch (err) {
        this.opts.log.error({ err }, `${this.opts.name} pass failed`);
      }
      if (result === 'idle' && !this.stopRequested && !this.pendingWake) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, this.opts.pollMs);
          this.wakeUp = () => {
            clearTimeout(t);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
    }
  }
}
