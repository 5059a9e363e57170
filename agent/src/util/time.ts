/** Small timing helpers shared by the agent's loops. */
import { AgentError } from '../errors.js';

/** Waits `ms`, or rejects with the signal's reason (an AgentError `JOB_ABORTED` by default). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function abortReason(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new AgentError('JOB_ABORTED', 'aborted');
}

/**
 * A sleep that `wake()` cuts short. A wake-up while nobody sleeps is kept, and the next sleep returns at
 * once: a work notice that lands while a loop is busy is not lost.
 */
export class WakeableSleep {
  private wakeUp: (() => void) | null = null;
  private woken = false;

  async sleep(ms: number): Promise<void> {
    if (!this.woken) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wakeUp = () => {
          this.wakeUp = null;
          done();
        };
      });
    }
    this.woken = false;
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }
}

/** A promise with its resolve/reject exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Exponential backoff with full jitter: a random wait up to min(cap, base * 2^n). */
export function backoffMs(
  tries: number,
  baseMs: number,
  capMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, tries));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
