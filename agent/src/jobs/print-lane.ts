/**
 * The formats one printer holds, in the order they were sent: what lets a printer print label N+1 the
 * moment label N is out, without ever printing a label twice or a label whose attempt went stale.
 *
 * - **At most one format queued ahead.** A run may send while the format before it is still printing
 *   (`queueAhead`: a ZPL printer whose completion evidence is per label, the `^HV` read-back), never while
 *   two are; without per-label evidence it sends only once the one before is settled. A format queued ahead
 *   prints within one label of being sent, so it is sent only with `minLeaseForSendMs` plus the longest
 *   label of lease left (print-step.ts).
 * - **Completions in order.** The printer prints and answers in order, so a run waits for its evidence only
 *   after every format ahead of it is settled: each `^HV` answer goes to the label it belongs to.
 * - **A cancel says what it did to the others.** `~JA` drops every format not yet started, not just one
 *   attempt's. So when a run cancels (its own label failed, or its attempt went stale), every other format
 *   in flight learns its fate: `unstarted` when the printer was stopped at the cancel (a stopped printer
 *   starts nothing, so a format still counted then never came out and may be sent again), `unknown`
 *   otherwise (it may be printing: only its own read-back, or a supervisor, can say).
 * - **The scanner's window.** The scanner over the exit reads label N only until N+1 comes out over it. On a
 *   printer with a scanner, a format is queued behind the one printing only while the window fits: of the
 *   last eight scans (from the label out to its read), the slowest but one took at most half the shortest of
 *   the last eight labels (from the start of its print to out), and none of them missed its window (read only
 *   after the next label came out). One slow scan in eight is forgiven (a pause of the process, the first
 *   label of a cold one); two are not. Until the first label was out and read, and while the window does not
 *   fit, the next format waits until the printer is empty and the label before it is read: slower, and no
 *   label goes out unread on the lane's say.
 * - **The printer's waits on the agent.** After a label comes out leaving no whole format in the printer (none
 *   queued, or the next one still arriving), the time until the next format is wholly in it counts as a wait
 *   on the agent when the next label's job was already claimed here (from its claim if that came later): the
 *   agent held the label while the line stood. A wait spent until the label before was scanned (the scanner's
 *   window not fitting, or a person's scan at the console) counts apart (`scan`). The first label, a label
 *   sent again and a printer emptied by a failure count none; the printer waiting for work is not the agent's,
 *   and a printer that never says a label is out counts none. The agent learns a label is out from its
 *   read-back, a few milliseconds after it is, so its count is at most the printer's. `waits` has the counts
 *   (the console and `GET /metrics` show them).
 */
import type { PrinterStatus } from '@dpp/shared';
import { AgentError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PrinterDriver } from '../printers/index.js';
import { abortReason } from '../util/time.js';

/** What a cancel by another run did to a format: dropped before it started, or perhaps not. */
export type CancelFate = 'unstarted' | 'unknown';

export interface LaneTicket {
  readonly attemptId: string;
  /** Order of sending on this printer (1, 2, ...). */
  readonly seq: number;
  /** The printer gives evidence of this very label (the `^HV` read-back), not just an empty buffer. */
  readonly perLabel: boolean;
  /** Set when another run's `~JA` hit this format; see {@link CancelFate}. */
  cancelled: CancelFate | null;
  /**
   * It waited for its turn while a label was printing and the scanner's window did not fit: it was sent only
   * once the printer was empty.
   */
  readonly heldForScan?: boolean;
}

interface Ticket extends LaneTicket {
  onCancel: Set<(fate: CancelFate) => void>;
  /** When its last byte was written. */
  sentAt?: number;
}

/** How many labels and scans the scanner's window is judged on. */
const WINDOW_SAMPLES = 8;

/** Labels a printer waited for on the agent, and for how long in all (module comment). */
export interface PrinterWaits {
  agent: { labels: number; ms: number };
  /**
   * Waits until the label before was scanned: by the scanner over the exit, its window not fitting, or by a person
   * at the console (a printer without a scanner, a label that moved on unread).
   */
  scan: { labels: number; ms: number };
}

export class PrintLane {
  private readonly tickets: Ticket[] = [];
  private readonly waiters = new Set<() => void>();
  /** A send is between its turn and its last byte. */
  private busy = false;
  private arrivals = 0;
  private readonly senders: Array<{ attemptId: string; rank: number }> = [];
  private lastSeq = 0;
  /** Attempts whose label was sent and is not scanned yet (in the printer, or out under the scanner). */
  private readonly unscanned = new Set<string>();
  /** The links of the last formats sent, newest last: what a scanner may see instead of an older label. */
  private readonly sentLinks: Array<{ seq: number; link: string; epc?: string | undefined }> = [];
  /** When the last label came out, and when each label out and not read by the scanner yet did. */
  private lastOutAt: number | null = null;
  private readonly outAt = new Map<string, number>();
  /** The last labels' times from the start of their print to out, and the last scans' from out to read. */
  private readonly labelTimes: number[] = [];
  private readonly scanTimes: number[] = [];
  /** Scans still to come before the window may open again, after one that missed it. */
  private scansHeld = 0;
  /** Labels another label (or a VOID one) came out over before the scanner's first read of them ended. */
  private readonly covered = new Set<string>();
  /** When each attempt whose label is not sent yet was claimed. */
  private readonly claimedAt = new Map<string, number>();
  /**
   * When a label came out leaving no whole format in the printer (one still arriving does not print); null once
   * a format is in.
   */
  private emptySince: number | null = null;
  private readonly waited: PrinterWaits = { agent: { labels: 0, ms: 0 }, scan: { labels: 0, ms: 0 } };

  constructor(
    private readonly printer: PrinterDriver,
    /** Whether a format may be queued behind one still printing (see the module comment). */
    readonly queueAhead: boolean,
    private readonly log: Logger,
    /** A scanner over the exit reads each label as it comes out (the window of the module comment). */
    private readonly scansAtExit = false,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether the next format may go behind one printing now: on a printer that queues, and, with a scanner
   * over the exit, while the scanner's window fits (the module comment).
   */
  get queuesNow(): boolean {
    if (!this.queueAhead) return false;
    if (!this.scansAtExit) return true;
    const { labelMs, scanMs } = this.judged();
    return labelMs !== null && scanMs !== null && this.scansHeld === 0 && 2 * scanMs <= labelMs;
  }

  /**
   * The figures the window is judged on, for the console: the shortest of the last labels, the slowest but one
   * of the last scans (the slowest while there is one), and whether the next format may queue.
   */
  get window(): { labelMs: number | null; scanMs: number | null; queuesAhead: boolean } {
    return { ...this.judged(), queuesAhead: this.queuesNow };
  }

  private judged(): { labelMs: number | null; scanMs: number | null } {
    const slowest = [...this.scanTimes].sort((a, b) => b - a);
    return {
      labelMs: this.labelTimes.length > 0 ? Math.min(...this.labelTimes) : null,
      scanMs: slowest[1] ?? slowest[0] ?? null,
    };
  }

  /** The printer's waits on the agent so far (the module comment). */
  get waits(): PrinterWaits {
    return { agent: { ...this.waited.agent }, scan: { ...this.waited.scan } };
  }

  /** The job of `attemptId` was claimed for this printer now: from here on its label is the agent's to send. */
  claimed(attemptId: string): void {
    this.claimedAt.set(attemptId, this.now());
  }

  /** Formats in the printer that are not settled yet. */
  get inFlight(): number {
    return this.tickets.length;
  }

  private changed(): void {
    for (const w of [...this.waiters]) w();
  }

  private until(ok: () => boolean, signal: AbortSignal): Promise<void> {
    if (ok()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ok()) return;
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(abortReason(signal));
      };
      const done = () => {
        this.waiters.delete(check);
        signal.removeEventListener('abort', onAbort);
      };
      if (signal.aborted) return onAbort();
      this.waiters.add(check);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Sends one format when its turn comes: one send at a time; and only while at most one format is ahead of
   * it (none without `queueAhead`). `gate` runs once the turn is there, right before the bytes (the ready
   * check and the lease confirmation); `ahead` tells it whether a format is still in the printer before it.
   * The ticket is made before the first byte, so a cancel by another run knows about this format.
   */
  async send<T>(
    attemptId: string,
    link: string,
    epc: string | undefined,
    perLabel: boolean,
    signal: AbortSignal,
    gate: (ahead: number) => Promise<void>,
    write: (ticket: LaneTicket) => Promise<T>,
  ): Promise<{ ticket: LaneTicket; result: T }> {
    // One sender at a time; among those waiting, a label sent before (sent again after a cancel or a
    // restart) goes first, then the others in the order they came.
    const resent = this.sentLinks.some((x) => x.link === link);
    const me = { attemptId, rank: resent ? -1 : ++this.arrivals };
    this.senders.push(me);
    let heldForScan = false;
    let waitedForRead = false;
    try {
      await this.until(() => {
        if (this.tickets.length > 0 && this.queueAhead && !this.queuesNow) heldForScan = true;
        if (this.busy) return false;
        if (!this.mayQueue(attemptId, perLabel)) {
          if (this.tickets.length === 0) waitedForRead = true;
          return false;
        }
        const first = this.senders.reduce((a, b) => (b.rank < a.rank ? b : a));
        return first === me;
      }, signal);
      this.busy = true;
    } finally {
      this.senders.splice(this.senders.indexOf(me), 1);
      this.changed();
    }
    try {
      await gate(this.tickets.length);
      const ticket: Ticket = {
        attemptId,
        seq: ++this.lastSeq,
        perLabel,
        cancelled: null,
        heldForScan,
        onCancel: new Set(),
      };
      this.tickets.push(ticket);
      const claimedAt = this.claimedAt.get(attemptId);
      this.claimedAt.delete(attemptId);
      this.unscanned.add(attemptId);
      this.sentLinks.push({ seq: ticket.seq, link, epc: epc?.toUpperCase() });
      if (this.sentLinks.length > 16) this.sentLinks.shift();
      try {
        const result = await write(ticket);
        ticket.sentAt = this.now();
        // The printer stood empty from the label ahead out (before this format or while it arrived) until now.
        const emptySince = this.emptySince;
        this.emptySince = null;
        if (emptySince !== null && claimedAt !== undefined) {
          const waits = heldForScan || waitedForRead ? this.waited.scan : this.waited.agent;
          waits.labels += 1;
          waits.ms += Math.max(0, ticket.sentAt - Math.max(emptySince, claimedAt));
        }
        return { ticket, result };
      } catch (err) {
        this.emptySince = null;
        // The caller decides (it may be out); the ticket stays until it settles it.
        (err as { laneTicket?: LaneTicket }).laneTicket = ticket;
        throw err;
      }
    } finally {
      this.busy = false;
      this.changed();
    }
  }

  /**
   * Into an empty printer, a format starts at once and comes out over the last label out: only once that one
   * is scanned (the scanner over the exit reads the last label out). Behind one format printing, both with
   * per-label evidence, on a printer that may queue and while the scanner's window fits: the one printing comes
   * out over the last label out first, whatever is sent now.
   */
  private mayQueue(attemptId: string, perLabel: boolean): boolean {
    if (this.tickets.length === 0) {
      for (const a of this.unscanned) if (a !== attemptId) return false;
      return true;
    }
    return this.queuesNow && perLabel && this.tickets.length === 1 && this.tickets[0]!.perLabel;
  }

  /**
   * The printer says `ticket`'s label is out (its read-back): it is settled, and the format behind it, if
   * any, is printing. Its print started when it was sent, or when the label ahead of it came out if that was
   * later: the time since is one label's.
   */
  out(ticket: LaneTicket | null): void {
    const t = ticket as Ticket | null;
    if (!t || !this.tickets.includes(t)) return;
    const at = this.now();
    if (t.sentAt !== undefined) sample(this.labelTimes, at - Math.max(t.sentAt, this.lastOutAt ?? -Infinity));
    this.lastOutAt = at;
    if (this.scansAtExit) this.outAt.set(t.attemptId, at);
    this.settle(t);
    if (this.tickets.every((x) => x.sentAt === undefined)) this.emptySince = at;
  }

  /**
   * The scanner over the exit read `attemptId`'s label, or a later one over it: the time since it came out is
   * one scan's, and if another label came out meanwhile, that scan missed its window.
   */
  scannerRead(attemptId: string): void {
    const at = this.outAt.get(attemptId);
    if (at === undefined) return;
    this.outAt.delete(attemptId);
    sample(this.scanTimes, this.now() - at);
    if (this.lastOutAt === null || this.lastOutAt <= at) this.scansHeld = Math.max(0, this.scansHeld - 1);
    else {
      this.covered.add(attemptId);
      // Missed: the window stays shut for the next eight scans.
      this.scansHeld = WINDOW_SAMPLES;
      this.log.warn(
        { attemptId },
        'the next label came out before this one was read; the next eight labels each wait for the one before to be read',
      );
    }
    this.changed();
  }

  /**
   * Waits until every format sent before this one is settled (the printer answers in order), then runs
   * `fn`; rejects with FORMAT_CANCELLED as soon as another run's cancel dropped this format before it
   * started.
   */
  async inTurn<T>(
    ticket: LaneTicket,
    signal: AbortSignal,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const t = ticket as Ticket;
    await this.until(() => this.tickets[0] === t || !this.tickets.includes(t), signal);
    if (t.cancelled === 'unstarted') throw cancelledError(t);
    const stop = new AbortController();
    const onAbort = () => stop.abort(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    let cancelled: Promise<never> | null = null;
    const listener = (fate: CancelFate) => {
      if (fate === 'unstarted') stop.abort(cancelledError(t));
    };
    t.onCancel.add(listener);
    try {
      cancelled = new Promise<never>((_, reject) =>
        stop.signal.addEventListener('abort', () => reject(abortReason(stop.signal)), { once: true }),
      );
      cancelled.catch(() => undefined);
      return await Promise.race([fn(stop.signal), cancelled]);
    } finally {
      t.onCancel.delete(listener);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * How many formats were sent to the printer after `ticket`. The printer prints in order, so when it says
   * it held `n` formats, they were the newest `n`: `ticket`'s own format was among them only if `n` is
   * greater than this.
   */
  sentAfter(ticket: LaneTicket | null): number {
    return ticket ? this.lastSeq - ticket.seq : 0;
  }

  /**
   * A label that may be out and is not scanned yet (a run resumed after a restart): nothing new is sent
   * until it is, so it stays the last label out.
   */
  hold(attemptId: string): void {
    this.unscanned.add(attemptId);
  }

  /**
   * A label sent before a restart (resume): its place in the order the printer got labels, so a scan that
   * sees a label sent after it is known for what it is. It is not in the printer as far as the lane knows.
   */
  sentBefore(attemptId: string, link: string, epc: string): LaneTicket {
    const ticket: LaneTicket = { attemptId, seq: ++this.lastSeq, perLabel: true, cancelled: null };
    this.sentLinks.push({ seq: ticket.seq, link, epc: epc.toUpperCase() });
    if (this.sentLinks.length > 16) this.sentLinks.shift();
    return ticket;
  }

  /**
   * A VOID label came out (a tag that would not take the write; the printer tries again on the next one): it
   * covers the last label out as any label does.
   */
  voidOut(): void {
    this.lastOutAt = this.now();
  }

  /**
   * Another label came out over `attemptId`'s before the scanner's first read of it ended: what the scanner
   * read may be that label (or a VOID one), not this one.
   */
  coveredBeforeRead(attemptId: string): boolean {
    return this.covered.has(attemptId);
  }

  /** The label was scanned (or its run ended): the printer may put out the next. */
  scanned(attemptId: string): void {
    this.claimedAt.delete(attemptId);
    this.outAt.delete(attemptId);
    this.covered.delete(attemptId);
    if (this.unscanned.delete(attemptId)) this.changed();
  }

  /** `epc` is the tag of a format sent after `ticket`'s. */
  epcSentLaterThan(ticket: LaneTicket | null, epc: string): boolean {
    return ticket !== null && this.sentLinks.some((s) => s.seq > ticket.seq && s.epc === epc.toUpperCase());
  }

  /** `link` is the label of a format sent after `ticket`'s: the printer has moved on past this label. */
  sentLaterThan(ticket: LaneTicket | null, link: string): boolean {
    return ticket !== null && this.sentLinks.some((s) => s.seq > ticket.seq && s.link === link);
  }

  /** The format is out, failed or given up: the next one's turn. */
  settle(ticket: LaneTicket | null | undefined): void {
    if (!ticket) return;
    const i = this.tickets.indexOf(ticket as Ticket);
    if (i < 0) return;
    this.tickets.splice(i, 1);
    this.changed();
  }

  /**
   * Cancels whatever the printer holds (`~JA`) on behalf of `by` (its own format must never print), and
   * tells every other format in flight what that did to it. Without other formats in flight it is the
   * plain cancel it always was.
   */
  async cancelHeld(by: LaneTicket | null): Promise<void> {
    const others = this.tickets.filter((t) => t !== by);
    if (others.length === 0) return this.printer.cancelHeld();
    let before: PrinterStatus | null = null;
    try {
      before = await this.printer.status();
    } catch {
      before = null;
    }
    await this.printer.cancelHeld();
    this.cancelledBy(by, before);
  }

  /**
   * Tells the formats in flight besides `by` that the printer's buffer was cancelled, or that the line
   * dropped; `before` is the status seen right before the cancel (null when unknown, which makes every fate
   * `unknown`: each of them is given one label's time to show it came out, then asks the printer itself).
   */
  cancelledBy(by: LaneTicket | null, before: PrinterStatus | null): void {
    const others = this.tickets.filter((t) => t !== by);
    // Stopped (paused, media out, an RFID error) at the cancel: it started nothing after the answer, so
    // every format it still counted was dropped unprinted.
    const stopped = before !== null && !before.ready && (before.formatsInBuffer ?? 0) >= this.tickets.length;
    const fate: CancelFate = stopped ? 'unstarted' : 'unknown';
    for (const t of others) {
      if (t.cancelled === 'unstarted') continue;
      t.cancelled = fate;
      this.log.info(
        { attemptId: t.attemptId, fate, by: by?.attemptId },
        'a format in the printer was cancelled',
      );
      for (const l of [...t.onCancel]) l(fate);
    }
    this.changed();
  }
}

function cancelledError(t: LaneTicket): AgentError {
  return new AgentError(
    'FORMAT_CANCELLED',
    'the printer dropped this format before it started (another attempt cancelled what it held)',
    { details: { attemptId: t.attemptId } },
  );
}

/** Keeps the last {@link WINDOW_SAMPLES} figures. */
function sample(xs: number[], x: number): void {
  xs.push(x);
  if (xs.length > WINDOW_SAMPLES) xs.shift();
}
