import type { Logger } from '../logging/logger.js';

/** What one pass of a worker did: `idle` sleeps until the next poll or a wake-up; `worked` goes again. */
export type PassResult = 'idle' | 'worked';

export interface PollingLoopOptions {
  name: string;
  pollMs: number;
  /**
   * The least time from one pass's start to the next one a wake-up asks for (default 0: at once). Wake-ups
   * that come sooner are gathered into that one pass; a pass that `worked` still goes again at once.
   */
  wakeGapMs?: number;
  log: Logger;
  /** One unit of work; a throw is logged and treated as idle. */
  pass: () => Promise<PassResult>;
}

/**
 * The loop of an in-process worker that leases its work from the store: run passes back to back while
 * there is work, sleep `pollMs` when idle, wake early when told that work was queued (no sooner than
 * `wakeGapMs` after the last pass began), and stop after the pass in hand.
 */
export class PollingLoop {
  private running: Promise<void> | undefined;
  private stopRequested = false;
  /** While the loop sleeps: ends the sleep at once (stop), or at the wake-up's time (wake). */
  private endSleep: (() => void) | undefined;
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

  /** Work was queued: look now (or once the wake gap is over) instead of at the next poll. */
  wake(): void {
    this.pendingWake = true;
    this.wakeUp?.();
  }

  /** Stops after the pass in hand. */
  async stop(): Promise<void> {
    this.stopRequested = true;
    this.endSleep?.();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopRequested) {
      let result: PassResult = 'idle';
      this.pendingWake = false;
      const started = Date.now();
      try {
        result = await this.opts.pass();
      } catch (err) {
        this.opts.log.error({ err }, `${this.opts.name} pass failed`);
      }
      if (result === 'idle' && !this.stopRequested) await this.sleep(started);
    }
  }

  /** Until the next poll, or a wake-up's turn: at once, or `wakeGapMs` after the pass that began at `started`. */
  private sleep(started: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const pollAt = Date.now() + this.opts.pollMs;
      let timer: NodeJS.Timeout | undefined;
      const end = () => {
        clearTimeout(timer);
        this.endSleep = undefined;
        this.wakeUp = undefined;
        resolve();
      };
      const after = (ms: number) => {
        clearTimeout(timer);
        timer = setTimeout(end, ms);
      };
      const woken = () => {
        // Never later than the poll would have looked.
        const wait = Math.min(started + (this.opts.wakeGapMs ?? 0), pollAt) - Date.now();
        if (wait > 0) after(wait);
        else end();
      };
      this.endSleep = end;
      this.wakeUp = woken;
      if (this.pendingWake) woken();
      else after(this.opts.pollMs);
    });
  }
}
