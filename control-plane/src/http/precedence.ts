/**
 * Precedence of first-in-line operations over deferrable ones on this process's one thread.
 *
 * SQLite's connection already serves a first-in-line operation's queries first (store `firstInLine`), but
 * most of a request's time is not in the database: reading and parsing its body, checking its credential,
 * verifying evidence, rendering the answer. Node runs whatever is ready in arrival order, so when the
 * thread is busy a claim an idle printer waits for queues behind every step of every result in flight.
 *
 * Here deferrable operations (print results) go through a gate before they read their body:
 * - at most `concurrency` of them are in progress at once, so what a claim can find queued ahead of it is
 *   bounded (the rest wait at the gate, costing nothing);
 * - none starts while a first-in-line operation (a claim) is in progress in this process;
 * - the waiting ones start in arrival order, one per turn of the event loop, so a claim that arrives
 *   meanwhile goes before the next;
 * - of those that arrive together, only the first starts in the turn that read it: when the thread is
 *   saturated, one turn of the event loop reads many requests at once, and starting every result among
 *   them there made the turn last as long as all their work (up to a second on the benchmark's floor,
 *   measured between two polls), while the claims that arrived meanwhile waited unread in their sockets for
 *   the next turn, which grew as long again. Held to one, a turn stays short and claims are read in the next;
 * - one that waited `maxWaitMs` for claims starts anyway (still within `concurrency`), so a claim that hangs
 *   on a slow database delays results but never stops them.
 *
 * Claims never starve results: a result waits at most `maxWaitMs` for them, and a steady stream of claims
 * dries up by itself, since a printer claims ahead only as far as its agent's pipeline reaches.
 *
 * Every mounted route goes through it (http/mount.ts), on either database: on SQLite this thread and the one
 * connection are what every request waits for, and a PostgreSQL floor whose tables hold a history waits for this
 * thread too (docs/benchmarks.md, round 20: 544-565 jobs/s with it against 448-496 without, claims p50 14 ms
 * against 20-21; on fresh tables, where the database was the limit, it had idled the process, round 6).
 */
import { AsyncResource } from 'node:async_hooks';

interface Waiting {
  start: () => void;
  since: number;
}

export interface PrecedenceOptions {
  /** Deferrable operations in progress at once. */
  concurrency?: number;
  /** Longest a deferrable operation waits for first-in-line ones to end. */
  maxWaitMs?: number;
  now?: () => number;
}

export class Precedence {
  private firstInProgress = 0;
  private deferrableInProgress = 0;
  /** A deferrable operation started in this turn of the event loop (cleared in its check phase). */
  private startedThisTurn = false;
  private readonly waiting: Waiting[] = [];
  private scheduled: { immediate: NodeJS.Immediate } | { timeout: NodeJS.Timeout } | null = null;
  private readonly concurrency: number;
  private readonly maxWaitMs: number;
  private readonly now: () => number;

  constructor(opts: PrecedenceOptions = {}) {
    this.concurrency = opts.concurrency ?? 4;
    this.maxWaitMs = opts.maxWaitMs ?? 100;
    this.now = opts.now ?? (() => performance.now());
  }

  /** A first-in-line operation begins; call the returned function (once or more) when it has ended. */
  first(): () => void {
    this.firstInProgress += 1;
    return this.once(() => {
      this.firstInProgress -= 1;
      this.schedule();
    });
  }

  /**
   * Calls `start` when a deferrable operation may begin (at once when nothing stands in its way), with the
   * function to call (once or more) when it has ended.
   */
  deferrable(start: (end: () => void) => void): void {
    const begin = () => {
      this.deferrableInProgress += 1;
      start(
        this.once(() => {
          this.deferrableInProgress -= 1;
          this.schedule();
        }),
      );
    };
    if (this.waiting.length === 0 && !this.startedThisTurn && this.mayStart(this.now())) {
      this.startedThisTurn = true;
      setImmediate(() => (this.startedThisTurn = false));
      begin();
      return;
    }
    // Started from another operation's turn, it keeps its own async context (request log, lanes).
    this.waiting.push({ start: AsyncResource.bind(begin), since: this.now() });
    this.schedule();
  }

  /** Deferrable operations waiting to start. */
  get deferred(): number {
    return this.waiting.length;
  }

  private mayStart(now: number, since = now): boolean {
    if (this.deferrableInProgress >= this.concurrency) return false;
    return this.firstInProgress === 0 || now - since >= this.maxWaitMs;
  }

  private once(fn: () => void): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      fn();
    };
  }

  /** Starts the oldest waiting operation in a later turn, if it may start then, and so on. */
  private schedule(): void {
    const oldest = this.waiting[0];
    if (!oldest || this.deferrableInProgress >= this.concurrency) return; // an end schedules again
    if (this.scheduled && 'immediate' in this.scheduled) return;
    if (this.scheduled) {
      if (this.firstInProgress > 0) return; // the timer for the wait's limit stands
      clearTimeout(this.scheduled.timeout);
    }
    const run = () => {
      this.scheduled = null;
      const next = this.waiting[0];
      if (next && this.mayStart(this.now(), next.since)) {
        this.waiting.shift();
        next.start();
      }
      this.schedule();
    };
    // Blocked only by first-in-line work: their end schedules again, and the wait's limit too.
    this.scheduled =
      this.firstInProgress > 0
        ? { timeout: setTimeout(run, Math.max(0, oldest.since + this.maxWaitMs - this.now())) }
        : { immediate: setImmediate(run) };
  }
}
