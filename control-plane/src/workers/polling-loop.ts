import type { Logger } from '../logging/logger.js';

/** What one pass of a worker did: `idle` sleeps until the next poll or a wake-up; `worked` goes again. */
export type PassResult = 'idle' | 'worked';

export interface PollingLoopOptions {
  name: string;
  pollMs: number;
  log: Logger;
  /** One unit of work; a throw is logged and treated as idle. */
  pass: () => Promise<PassResult>;
  /**
   * The least time from the start of a pass to the start of the next one that a wake-up starts (default 0).
   * A burst of wake-ups is then one pass that takes all their work: what each pass costs whatever it does
   * (a transparency log pass signs a tree head) is paid once per gap, not once per wake-up. A pass that
   * `worked` (a backlog) is followed at once as always.
   */
  wakeGapMs?: number;
  now?: () => number;
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
  /** When the last pass started. */
  private lastStart = -Infinity;

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
    const now = this.opts.now ?? (() => performance.now());
    const gap = this.opts.wakeGapMs ?? 0;
    while (!this.stopRequested) {
      let result: PassResult = 'idle';
      this.pendingWake = false;
      this.lastStart = now();
      try {
        result = await this.opts.pass();
      } catch (err) {
        this.opts.log.error({ err }, `${this.opts.name} pass failed`);
      }
      if (result === 'worked' || this.stopRequested) continue;
      // Idle: sleep until the next poll, or until a wake-up, but not sooner than the gap after this pass began.
      await new Promise<void>((resolve) => {
        let t: ReturnType<typeof setTimeout>;
        const woken = () => {
          clearTimeout(t);
          const rest = this.lastStart + gap - now();
          if (rest > 0 && !this.stopRequested) t = setTimeout(resolve, rest);
          else resolve();
        };
        if (this.pendingWake) woken();
        else t = setTimeout(resolve, this.opts.pollMs);
        this.wakeUp = () => {
          if (this.stopRequested) {
            clearTimeout(t);
            resolve();
          } else woken();
        };
      });
      this.wakeUp = undefined;
    }
  }
}
