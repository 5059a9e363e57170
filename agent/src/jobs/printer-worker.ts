/**
 * One printer's loop: make sure the printer can print, claim, run the job, and claim the next one when the
 * label printing is out and scanned, so the next label is claimed, verified, rendered, proven and queued behind
 * the one that started printing then, long before that one is out (`jobs.pipelineDepth` jobs at once, 3 by
 * default: one out and being scanned or sealed, one printing, one queued behind it or being prepared; the
 * printer's lane, print-lane.ts, keeps the order and at most one format queued ahead). Only one job is ever
 * being prepared at a time, and at most two labels are not out and scanned yet (three once the printer waited
 * for one: see LABELS_AHEAD). It sleeps until an MQTT notice wakes it, or polls: every
 * `poll.intervalMs` while the broker is unreachable, every `poll.idleIntervalMs` while it is up (a missed
 * notice loses nothing). A printer that is not ready is never claimed for. An attempt the agent left
 * unfinished on this printer (it stopped or crashed) is resumed before anything new is claimed, as long as
 * the control plane still says it is ours.
 */
import type { PrinterState, PrinterStatus } from '@dpp/shared';
import type { Claimed, ControlPlaneClient } from '../api/index.js';
import type { AgentConfig, PrinterConfig } from '../config/index.js';
import { toAgentError } from '../errors.js';
import type { Logger } from '../log.js';
import { printerStateOf, type PrinterDriver } from '../printers/index.js';
import { WakeableSleep } from '../util/time.js';
import type { JournalEntry } from './journal.js';
import { isLeaseLost } from './lease.js';
import { JobRun, sentBefore, type PipelineDeps, type Resume, type RunStart } from './pipeline.js';
import { PrintLane, type PrinterWaits } from './print-lane.js';
import type { JobStep } from './steps.js';

export interface PrinterView {
  name: string;
  language: 'zpl' | 'pdf';
  transport: string;
  target: string;
  rfid: boolean;
  /** An NFC encoder is fitted. */
  nfc: boolean;
  scanner: string | null;
  state: PrinterState;
  detail: string | null;
  status: PrinterStatus | null;
  currentJob: { jobRef: string; attemptId: string; step: JobStep } | null;
  statusAt: string | null;
  /**
   * When the printer first waited for a label claimed behind one it was printing; from then on each next job is
   * claimed as soon as the one before is sent (see LABELS_AHEAD). Null while it never has.
   */
  printerWaitedAt: string | null;
  /**
   * With a scanner over the exit: the shortest of the last labels (start of print to out) and the slowest of
   * the last scans (out to read), and whether the next format is queued behind the one printing (the scan fits
   * in half a label) or held until the printer is empty. Null figures until the first label is out and read.
   */
  scanWindow: { labelMs: number | null; scanMs: number | null; queuesAhead: boolean };
  /**
   * Labels before which the printer stood empty, the label ahead out, while the next was already claimed here, and
   * for how long in all; `scan` those held until the label before was read (print-lane.ts).
   */
  waits: PrinterWaits;
}

export interface PrinterWorkerOptions {
  config: PrinterConfig;
  driver: PrinterDriver;
  client: Pick<ControlPlaneClient, 'claim'>;
  poll: AgentConfig['poll'];
  /** Whether work notices can arrive (the broker is connected). */
  noticesLive: () => boolean;
  /** Everything a job run needs except the printer and its scanner. */
  pipeline: Omit<PipelineDeps, 'printer' | 'printerConfig' | 'onPrinterStatus' | 'log' | 'lane'>;
  log: Logger;
  now: () => number;
  onView: (view: PrinterView) => void;
  onRunFinished?: (jobRef: string, step: JobStep) => void;
  /** A claim got an answer: the control plane is reachable. */
  onControlPlaneAnswered?: () => void;
}

/**
 * Labels of one printer's jobs not out and scanned yet: the one printing and the one behind it (its format
 * queued in the printer where the lane allows, else ready in the agent). The next job is claimed once the label
 * ahead of the one printing is out and scanned (no format is sent before that anyway: the scanner over the exit
 * reads the last label out), about a label's time before its format is needed, rather than as soon as the one
 * before it is sent: it waits for its turn in the printer, not in the agent.
 *
 * That leaves the next label about one label's time, less its scan and its preparation, to reach the printer;
 * claimed as soon as the label before it is sent it had two. The first time the printer waits for a label all
 * the same (the control plane slow to answer for a while, a printer faster than the agent), the worker claims
 * that way from then on (`LABELS_AHEAD + 1`): the printer's margin first, the agent's time per label second.
 */
const LABELS_AHEAD = 2;

export class PrinterWorker {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly sleeper = new WakeableSleep();
  private nextClaimAt = 0;
  /**
   * When the last claim found nothing (null while there may be work): the next poll is due the poll interval
   * after it, decided at each turn, so it comes within `poll.intervalMs` of the broker going down even
   * though the slow idle poll was armed while it was up.
   */
  private idleSince: number | null = null;
  /** Jobs in progress on this printer, oldest first. */
  private readonly runs: JobRun[] = [];
  private readonly finishing = new Set<Promise<void>>();
  private readonly lane: PrintLane;
  /** Labels not out and scanned yet at which the next claim waits: LABELS_AHEAD, one more once the printer waited. */
  private labelsAhead = LABELS_AHEAD;
  private printerWaitedAt: string | null = null;
  private status: PrinterStatus | null = null;
  private state: PrinterState = 'offline';
  private detail: string | null = null;
  private statusAt: string | null = null;
  private resumable: Resume[] = [];
  private readonly log: Logger;

  constructor(private readonly opts: PrinterWorkerOptions) {
    this.log = opts.log.child({ printer: opts.config.name });
    if (!opts.driver.twoWay) this.state = 'ready';
    // Queue a format behind one printing only where each label gives its own evidence (the ^HV read-back).
    this.lane = new PrintLane(
      opts.driver,
      opts.driver.twoWay && (opts.config.rfid || opts.config.nfc),
      this.log,
      !!opts.config.scanner && !!opts.pipeline.scanner,
      opts.now,
    );
  }

  get name(): string {
    return this.opts.config.name;
  }

  /** The oldest job in progress (the one printing or being scanned), if any. */
  get current(): JobRun | null {
    return this.runs[0] ?? null;
  }

  /** Every job in progress, oldest first. */
  get active(): readonly JobRun[] {
    return this.runs;
  }

  view(): PrinterView {
    const c = this.opts.config;
    return {
      name: c.name,
      language: c.language,
      transport: c.transport.type,
      target: this.opts.driver.transport.target,
      rfid: c.rfid,
      nfc: c.nfc,
      scanner: c.scanner
        ? c.scanner.link.type === 'serial'
          ? c.scanner.link.path
          : `${c.scanner.link.host}:${c.scanner.link.port}`
        : null,
      state: this.state,
      detail: this.detail,
      status: this.status,
      currentJob: this.current
        ? { jobRef: this.current.jobRef, attemptId: this.current.attemptId, step: this.current.step }
        : null,
      statusAt: this.statusAt,
      printerWaitedAt: this.printerWaitedAt,
      scanWindow: this.lane.window,
      waits: this.lane.waits,
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.work().catch((err: unknown) => this.log.error({ err }, 'printer loop died'));
  }

  /**
   * Resumes these attempts, left unfinished by an earlier run (oldest first), before claiming anything (call
   * before `start`). `held` formats were found in the printer and cleared at start-up: the printer prints in
   * the order it was sent, so they were the newest `held` labels sent; an older one sent may have come out.
   */
  resume(entries: JournalEntry[], held: number): void {
    const sent = entries
      .filter((e) => sentBefore(e.evidence))
      .sort((a, b) => sentAt(a).localeCompare(sentAt(b)));
    const cleared = new Set(held > 0 ? sent.slice(-held).map((e) => e.attemptId) : []);
    const order = new Map(
      sent.map((e) => [e.attemptId, this.lane.sentBefore(e.attemptId, e.digitalLink, e.epc)]),
    );
    this.resumable = entries.map((entry) => ({
      entry,
      heldCleared: cleared.has(entry.attemptId),
      sent: order.get(entry.attemptId),
    }));
  }

  /** Claim now (a work notice, the broker came back). */
  wake(): void {
    this.nextClaimAt = 0;
    this.sleeper.wake();
  }

  /** Stops claiming; a job in progress is cancelled (FAILED agent_stopped) unless `finishJob`. */
  async stop(): Promise<void> {
    this.running = false;
    for (const run of this.runs) run.cancel('agent_stopped', 'the agent is stopping');
    this.wake();
    await this.loop;
    await Promise.all([...this.finishing]);
  }

  /** Drops whatever the printer holds (formats of attempts that are not ours any more). */
  cancelHeld(): Promise<void> {
    return this.opts.driver.twoWay ? this.opts.driver.cancelHeld() : Promise.resolve();
  }

  /**
   * At start-up, for an attempt left unfinished: cancels what the printer holds and answers how many formats
   * provably never started (so never came out); 0 when it held none or cannot tell (see `cancelUnstarted`).
   */
  async clearHeld(): Promise<number> {
    if (!this.opts.driver.twoWay) return 0;
    const { driver } = this.opts;
    const held = await driver.cancelUnstarted(this.opts.config.longestLabelMs).catch(async (err: unknown) => {
      // It does not answer: whatever it holds must still never print later.
      await driver.cancelHeld().catch(() => undefined);
      throw err;
    });
    return held ?? 0;
  }

  /** Closes the printer's line (after `stop`). */
  close(): Promise<void> {
    return this.opts.driver.close();
  }

  /** Records what the printer said and tells the listeners. */
  noteStatus(status: PrinterStatus | null, offline = false): void {
    this.status = status;
    this.statusAt = new Date(this.opts.now()).toISOString();
    this.state = offline ? 'offline' : printerStateOf(status, this.runs.length > 0);
    this.detail = offline ? 'no answer' : status && !status.ready ? status.errors.join(', ') : null;
    this.opts.onView(this.view());
  }

  private async ready(): Promise<boolean> {
    if (!this.opts.driver.twoWay) return true;
    try {
      const s = await this.opts.driver.status();
      this.noteStatus(s);
      return s === null || s.ready;
    } catch (err) {
      this.noteStatus(null, true);
      this.log.debug({ err: toAgentError(err).message }, 'printer does not answer');
      return false;
    }
  }

  private async work(): Promise<void> {
    const { poll } = this.opts;
    let wasReady = true;
    for (const resume of this.resumable.splice(0)) await this.resumeJob(resume);
    while (this.running) {
      // One job prepared at a time, no more than the pipeline's depth in progress, and fewer than
      // `labelsAhead` labels not out and scanned yet: wait for a send, a label scanned or an end.
      const depth = this.opts.pipeline.jobs.pipelineDepth;
      if (
        this.runs.length >= depth ||
        this.runs.some((r) => !r.hasSent) ||
        this.runs.filter((r) => !r.isCleared).length >= this.labelsAhead
      ) {
        await this.sleeper.sleep(poll.statusIntervalMs);
        continue;
      }
      const ready = await this.ready();
      if (!ready) {
        wasReady = false;
        await this.sleeper.sleep(poll.notReadyRetryMs);
        continue;
      }
      if (!wasReady) this.nextClaimAt = 0; // back from paper out, a pause...: work may be waiting
      wasReady = true;
      if (this.idleSince !== null && this.nextClaimAt !== 0)
        this.nextClaimAt = this.idleSince + (this.opts.noticesLive() ? poll.idleIntervalMs : poll.intervalMs);
      const now = this.opts.now();
      if (now < this.nextClaimAt) {
        // Between claims the printer's status is still watched, for the console and MQTT.
        await this.sleeper.sleep(Math.min(poll.statusIntervalMs, this.nextClaimAt - now));
        continue;
      }
      let claimed: Claimed | null;
      const claimStartedAt = this.opts.now();
      // The label the next one is claimed behind (the last one not out and scanned yet), if any.
      const behind = this.runs.filter((r) => !r.isCleared).at(-1);
      try {
        claimed = await this.opts.client.claim({
          name: this.name,
          rfid: this.opts.config.rfid,
          nfc: this.opts.config.nfc,
        });
        this.opts.onControlPlaneAnswered?.();
      } catch (err) {
        this.log.warn({ err: toAgentError(err).message }, 'claim failed');
        this.idleSince = null;
        this.nextClaimAt = this.opts.now() + poll.intervalMs;
        continue;
      }
      if (!claimed) {
        this.idleSince = this.opts.now();
        this.nextClaimAt = this.idleSince + (this.opts.noticesLive() ? poll.idleIntervalMs : poll.intervalMs);
        continue;
      }
      this.idleSince = null;
      this.lane.claimed(claimed.attemptId);
      this.startJob(claimed, claimStartedAt, undefined, behind);
      this.nextClaimAt = 0; // there may be more: claim again once this label's place is free
    }
    await Promise.all([...this.finishing]);
  }

  /**
   * Runs the job beside the others in progress; the loop wakes when its label is sent, when it is out and scanned,
   * and when the job ends.
   */
  private startJob(claimed: RunStart, claimStartedAt: number, resume?: Resume, behind?: JobRun): void {
    const done = this.runJob(claimed, claimStartedAt, resume, behind)
      .catch((err: unknown) => this.log.error({ err }, 'job run died'))
      .finally(() => {
        this.finishing.delete(done);
        this.sleeper.wake();
      });
    this.finishing.add(done);
  }

  private deps(): PipelineDeps {
    return {
      ...this.opts.pipeline,
      lane: this.lane,
      printer: this.opts.driver,
      printerConfig: this.opts.config,
      log: this.log,
      onPrinterStatus: (status, _jobRef, offline) => this.noteStatus(status, offline),
    };
  }

  /**
   * Asks the control plane whether the attempt is still ours (a heartbeat, which also extends its lease and
   * hands a fresh envelope); while it cannot be reached, asks again until the envelope the attempt started
   * with expires (for as long as it takes when the label may be out). Ours: the run picks up where the journal says it stopped. Not ours: it is abandoned, and
   * the job is the reaper's and the next claim's.
   */
  private async resumeJob(resume: Resume): Promise<void> {
    const { entry } = resume;
    const journal = this.opts.pipeline.journal;
    const expiresAt = entry.claims.exp * 1000;
    for (;;) {
      if (!this.running) return journal.step(entry.attemptId, 'abandoned', true);
      try {
        const answer = await this.opts.pipeline.client.heartbeat(entry.jobRef, entry.attemptId);
        const start: RunStart = { job: { jobRef: entry.jobRef }, attemptId: entry.attemptId, ...answer };
        return this.startJob(start, this.opts.now(), resume);
      } catch (err) {
        const e = toAgentError(err);
        // A label that may be out keeps its attempt past the envelope's expiry: ask until the control plane
        // answers, however long it is down.
        if (isLeaseLost(e) || (this.opts.now() >= expiresAt && !sentBefore(entry.evidence))) {
          // SEALED went out before the stop: the job ended as it should, the lease with it.
          const sealed = this.opts.pipeline.outbox.resultOf(entry.jobRef, entry.attemptId, 'SEALED');
          if (sealed?.state === 'delivered') return journal.step(entry.attemptId, 'sealed', true);
          this.log.warn(
            { jobRef: entry.jobRef, err: e.message },
            'attempt left unfinished is not ours any more',
          );
          journal.setError(entry.attemptId, { code: e.apiCode ?? e.code, message: e.message });
          return journal.step(entry.attemptId, 'abandoned', true);
        }
        this.log.warn({ jobRef: entry.jobRef, err: e.message }, 'cannot resume yet; asking again');
        await this.sleeper.sleep(Math.min(this.opts.poll.intervalMs, 1000));
      }
    }
  }

  private async runJob(
    claimed: RunStart,
    claimStartedAt: number,
    resume?: Resume,
    behind?: JobRun,
  ): Promise<void> {
    const run = new JobRun(this.deps(), claimed, claimStartedAt, resume ?? null);
    this.runs.push(run);
    // Claimed while stopping: say FAILED at once rather than leave the job to its lease.
    if (!this.running) run.cancel('agent_stopped', 'the agent is stopping');
    this.noteStatus(this.status);
    void run.sent.then(() => {
      if (behind) this.noteWaited(run, behind);
      this.sleeper.wake();
    });
    void run.cleared.then(() => this.sleeper.wake());
    const step = await run.run();
    this.runs.splice(this.runs.indexOf(run), 1);
    this.noteStatus(this.status);
    this.opts.onRunFinished?.(run.jobRef, step);
  }

  /**
   * `run`, claimed while `ahead` was not out and scanned, has just sent its label. Had the printer nothing else
   * by then, `ahead` having come out as it should (on a printer that queues a format behind the label printing),
   * it waited for this label: from now on the next job is claimed as soon as the label before it is sent.
   */
  private noteWaited(run: JobRun, ahead: JobRun): void {
    if (this.labelsAhead > LABELS_AHEAD || !this.lane.queueAhead) return;
    // An empty printer is no news when the lane held the label for it (the scanner's window).
    if (run.step !== 'printing' || this.lane.inFlight !== 1 || run.heldForScan) return;
    if (ahead.step === 'failed' || ahead.step === 'abandoned') return;
    this.labelsAhead = LABELS_AHEAD + 1;
    this.printerWaitedAt = new Date(this.opts.now()).toISOString();
    this.opts.onView(this.view());
    this.log.warn(
      { jobRef: run.jobRef },
      'the printer was empty when this label reached it; claiming each next job as soon as the one before is sent from now on',
    );
  }
}

/** When the label of an attempt was sent (the journalled receipt): the order the printer got them in. */
function sentAt(e: JournalEntry): string {
  const ev = e.evidence as { sending?: { submittedAt?: string }; spool_receipt?: { submittedAt?: string } };
  return ev.sending?.submittedAt ?? ev.spool_receipt?.submittedAt ?? '';
}
