/**
 * One claimed job on one printer, from the envelope to SEALED (or FAILED): verify the envelope, render
 * and prove the QR, report RENDERED, make sure the printer is ready and the attempt still ours, send,
 * report SPOOL_SUBMITTED, wait for the printer's evidence, attest (device or supervisor), scan and
 * compare, sign the evidence bundle, report SEALED. Each result goes through the durable outbox; the
 * lease is kept by heartbeats for as long as the job runs. Anything that goes wrong ends in FAILED with a
 * reason, unless the attempt is no longer ours, in which case nothing more is said.
 *
 * A run can also resume an attempt the agent was working on when it stopped or crashed (`Resume`), from
 * what its journal says was already reported: nothing reported is repeated, and a label that may have
 * come out is never sent again on the device's own say. If the printer still held it (and it was cleared
 * at start-up), it is sent again; otherwise a supervisor looks at what came out and attests it or asks for
 * a re-print.
 */
import type {
  AidcEnvelopeClaims,
  Attestation,
  PrinterStatus,
  RenderManifest,
  ResultState,
  ScanResult,
  SpoolReceipt,
} from '@dpp/shared';
import type { Claimed, ControlPlaneClient } from '../api/index.js';
import type { AgentConfig, PrinterConfig } from '../config/index.js';
import { AgentError, isAgentError, toAgentError } from '../errors.js';
import type { DeviceKey } from '../identity/index.js';
import type { Logger } from '../log.js';
import type { Outbox, Settlement } from '../outbox/index.js';
import type { Completion, PrinterDriver } from '../printers/index.js';
import { renderLabel, sha256Hex, type RenderedLabel } from '../render/index.js';
import type { ScanRead, Scanner } from '../scanners/index.js';
import { abortReason, sleep } from '../util/time.js';
import { deviceAttestation, humanAttestation } from './attestation.js';
import { signEvidenceBundle } from './evidence-bundle.js';
import { failureOf, jobFailure } from './failures.js';
import type { AttestationAnswer, HumanGate, ManualScan } from './human-gate.js';
import type { JobJournal, JournalEntry } from './journal.js';
import { LeaseKeeper, isLeaseLost } from './lease.js';
import { FINAL_STEPS, type JobStep } from './steps.js';

export interface JobStepEvent {
  jobRef: string;
  attemptId: string;
  printer: string;
  step: JobStep;
  at: string;
  detail?: string | undefined;
  /** On the final step: time from the claim request, and the part spent waiting on devices and people. */
  timings?: JobTimings | undefined;
}

export interface JobTimings {
  /** From the claim request to the final step. */
  totalMs: number;
  /**
   * Time the job waited on the printer (status, send, print to read-back) or the scanner. Results the outbox
   * delivers meanwhile are off the critical path, as they are in production.
   */
  deviceMs: number;
  /** Waiting for a supervisor or a manual scan. */
  humanMs: number;
}

export interface PipelineDeps {
  deviceId: string;
  key: DeviceKey;
  client: Pick<ControlPlaneClient, 'heartbeat'>;
  outbox: Outbox;
  journal: JobJournal;
  humans: HumanGate;
  verify: (envelope: string) => Promise<AidcEnvelopeClaims>;
  printer: PrinterDriver;
  printerConfig: PrinterConfig;
  scanner: Scanner | null;
  jobs: AgentConfig['jobs'];
  /** Wait between two status checks of a printer that is not ready. */
  notReadyRetryMs: number;
  log: Logger;
  now: () => number;
  onStep: (event: JobStepEvent) => void;
  onPrinterStatus: (status: PrinterStatus | null, jobRef: string | undefined, offline?: boolean) => void;
}

/** What a run starts from: a claim, or a heartbeat's fresh envelope for an attempt being resumed. */
export type RunStart = Pick<Claimed, 'attemptId' | 'envelope' | 'leaseExpiresAt'> & {
  job: Pick<Claimed['job'], 'jobRef'>;
};

/** An attempt left unfinished by an earlier run of the agent, with what start-up found on its printer. */
export interface Resume {
  entry: JournalEntry;
  /**
   * Formats were still held in the printer at start-up and were cleared: a label sent before did not come
   * out, so it may be sent again. False when the printer held none, or could not tell (one-way, offline).
   */
  heldCleared: boolean;
}

/** Evidence of an attempt already reported (queued in the outbox), by kind. */
interface Reported {
  render_manifest?: RenderManifest;
  /** Written ahead of the first byte to the printer: the receipt the send will give (see `send`). */
  sending?: SpoolReceipt;
  spool_receipt?: SpoolReceipt;
  attestation?: Attestation;
  scan_result?: ScanResult;
  evidence_bundle?: { jws: string };
}

export class JobRun {
  readonly jobRef: string;
  readonly attemptId: string;
  private readonly abort = new AbortController();
  private readonly log: Logger;
  private currentStep: JobStep = 'claimed';
  /** The send gate was opened (or a restart found the label sent): from here on no FAILED on the system's say. */
  private labelMayBeOut = false;
  private lease: LeaseKeeper | null = null;
  private readonly startedAt: number;
  private deviceMs = 0;
  private humanMs = 0;
  /** Set once SEALED is queued: from then on the outbox finishes the job, whatever happens here. */
  private sealedRow: number | null = null;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly claimed: RunStart,
    /** When the claim request went out (for the timings). */
    claimStartedAt: number = deps.now(),
    private readonly resume: Resume | null = null,
  ) {
    this.startedAt = claimStartedAt;
    this.jobRef = claimed.job.jobRef;
    this.attemptId = claimed.attemptId;
    this.log = deps.log.child({
      jobRef: this.jobRef,
      attemptId: this.attemptId,
      printer: deps.printerConfig.name,
    });
  }

  get step(): JobStep {
    return this.currentStep;
  }

  /** Resumed after a restart with its label already sent before: it may have come out while the agent was down. */
  get resumedAfterSend(): boolean {
    return sentBefore(this.resume?.entry.evidence ?? {}) && !this.resume?.heldCleared;
  }

  /** Stops the job (an operator's FAILED, or the agent stopping); it reports FAILED with `reason`. */
  cancel(reason: string, detail = `cancelled: ${reason}`): void {
    this.abort.abort(jobFailure(reason, detail));
  }

  private get signal(): AbortSignal {
    return this.abort.signal;
  }

  private setStep(step: JobStep, detail?: string): void {
    this.currentStep = step;
    const final = FINAL_STEPS.includes(step);
    this.deps.journal.step(this.attemptId, step, final);
    const now = this.deps.now();
    this.deps.onStep({
      jobRef: this.jobRef,
      attemptId: this.attemptId,
      printer: this.deps.printerConfig.name,
      step,
      at: new Date(now).toISOString(),
      detail,
      ...(final
        ? { timings: { totalMs: now - this.startedAt, deviceMs: this.deviceMs, humanMs: this.humanMs } }
        : {}),
    });
    this.log.info({ step, detail }, 'job step');
  }

  /** Runs `fn` and counts its time as device (or human) time. */
  private async timed<T>(kind: 'device' | 'human', fn: () => Promise<T>): Promise<T> {
    const t0 = this.deps.now();
    try {
      return await fn();
    } finally {
      if (kind === 'device') this.deviceMs += this.deps.now() - t0;
      else this.humanMs += this.deps.now() - t0;
    }
  }

  private checkAbort(): void {
    if (this.signal.aborted) throw abortReason(this.signal);
  }

  /** Queues a result and notes its evidence in the journal, in one transaction (what a resume reads). */
  private report(status: ResultState, kind: string, value: unknown): number {
    return this.deps.journal.atomically(() => {
      const row = this.deps.outbox.enqueue({
        jobRef: this.jobRef,
        attemptId: this.attemptId,
        status,
        evidence: { [kind]: value },
      });
      this.deps.journal.addEvidence(this.attemptId, kind, value);
      return row.id;
    });
  }

  /** The settlement of a row, or the abort reason; a refused row becomes an error. */
  private async delivered(id: number): Promise<void> {
    const s = await Promise.race([
      this.deps.outbox.settled(id),
      new Promise<never>((_, reject) => {
        if (this.signal.aborted) reject(abortReason(this.signal));
        this.signal.addEventListener('abort', () => reject(abortReason(this.signal)), { once: true });
      }),
    ]);
    if (s.state !== 'delivered') throw refused(s);
  }

  /** Runs the job to its end; resolves with the final step. Never throws. */
  async run(): Promise<JobStep> {
    let claims: AidcEnvelopeClaims;
    try {
      const fresh = await this.deps.verify(this.claimed.envelope);
      if (fresh.job_ref !== this.jobRef || fresh.attempt_id !== this.attemptId)
        throw jobFailure('envelope_mismatch', 'the envelope names another job or attempt than the claim');
      if (fresh.printer !== this.deps.printerConfig.name)
        throw jobFailure(
          'envelope_mismatch',
          `the envelope is for printer ${fresh.printer.slice(0, 100)}, not ${this.deps.printerConfig.name}`,
        );
      // A resumed attempt keeps the claims it started with (its evidence names that envelope's jti); the
      // fresh envelope must still be about the same label.
      claims = this.resume ? sameLabel(this.resume.entry.claims, fresh) : fresh;
    } catch (err) {
      // Nothing was journalled: the claims are not to be trusted. Say FAILED so the job is not stuck.
      const f = failureOf(err);
      this.log.error({ err: toAgentError(err).toJSON() }, 'envelope refused');
      this.deps.outbox.enqueue({
        jobRef: this.jobRef,
        attemptId: this.attemptId,
        status: 'FAILED',
        evidence: { failure: f },
      });
      return 'failed';
    }
    this.deps.journal.record(this.deps.printerConfig.name, claims);
    if (this.resume) this.log.info({ step: this.resume.entry.step }, 'resuming an attempt left unfinished');
    this.setStep('claimed', this.resume ? `resumed from ${this.resume.entry.step}` : undefined);
    const lease = new LeaseKeeper({
      client: this.deps.client,
      verify: this.deps.verify,
      jobRef: this.jobRef,
      attemptId: this.attemptId,
      leaseExpiresAt: Date.parse(this.claimed.leaseExpiresAt),
      intervalMs: this.deps.jobs.heartbeatIntervalMs,
      log: this.log,
      now: this.deps.now,
      onLost: (err) => this.abort.abort(err),
    });
    this.lease = lease;
    lease.start();
    const offRejected = this.deps.outbox.events.on('rejected', (row) => {
      if (row.attempt_id === this.attemptId && row.status !== 'FAILED')
        this.abort.abort(
          refused({
            id: row.id,
            state: 'rejected',
            code: row.error_code,
            httpStatus: row.http_status,
            message: row.error_message,
          }),
        );
    });
    try {
      return await this.steps(claims);
    } catch (err) {
      return await this.failed(err);
    } finally {
      lease.stop();
      offRejected();
    }
  }

  private async steps(claims: AidcEnvelopeClaims): Promise<JobStep> {
    const d = this.deps;
    const done = (this.resume?.entry.evidence ?? {}) as Reported;
    this.checkAbort();
    if (done.evidence_bundle) {
      // SEALED is queued: the outbox delivers it. Heartbeats go on until the control plane has it.
      this.sealedRow = this.deps.outbox.resultOf(this.jobRef, this.attemptId, 'SEALED')?.id ?? null;
      if (this.sealedRow !== null) await this.delivered(this.sealedRow);
      this.setStep('sealed');
      return 'sealed';
    }
    const rendered = await this.render(claims, done.render_manifest);
    const renderedRow = done.render_manifest
      ? null
      : this.report('RENDERED', 'render_manifest', rendered.manifest);
    this.setStep('rendered');

    // Sent before a restart: the label may be out whether or not SPOOL_SUBMITTED was reported.
    const before = sentBefore(done);
    if (before) this.labelMayBeOut = true;
    let spool = done.spool_receipt;
    if (!spool) {
      spool = done.sending ?? (await this.send(rendered, renderedRow, this.jobRef));
      this.report('SPOOL_SUBMITTED', 'spool_receipt', spool);
      this.setStep('printing');
    }
    let attestation = done.attestation;
    if (!attestation) {
      attestation = await this.attest(rendered, claims, before);
      this.report('PRINTED_ATTESTED', 'attestation', attestation);
      this.setStep('attested', `${attestation.actor.type} ${attestation.method}`);
    }
    let scan = done.scan_result;
    if (!scan) {
      scan = await this.scan(claims, rendered);
      this.report('SCAN_VERIFIED', 'scan_result', scan);
    }
    this.setStep('scanned');

    this.setStep('sealing');
    const jws = await signEvidenceBundle(
      {
        jobRef: this.jobRef,
        attemptId: this.attemptId,
        deviceId: d.deviceId,
        envelopeJti: claims.jti,
        renderManifest: rendered.manifest as RenderManifest,
        spoolReceipt: spool,
        attestation,
        scanResult: scan,
        sealedAt: new Date(d.now()).toISOString(),
      },
      d.key,
    );
    this.sealedRow = this.report('SEALED', 'evidence_bundle', { jws });
    await this.delivered(this.sealedRow); // heartbeats go on until the control plane has it
    this.setStep('sealed');
    return 'sealed';
  }

  /**
   * Renders the label and proves its QR. Resumed after RENDERED was reported, it renders again as of the
   * reported time and must give the same bytes: the evidence names them, so anything else is not printed.
   */
  private async render(claims: AidcEnvelopeClaims, reported?: RenderManifest): Promise<RenderedLabel> {
    const d = this.deps;
    const at = reported ? new Date(reported.renderedAt) : new Date(d.now());
    const rendered = await renderLabel(claims, d.printerConfig, at);
    if (reported && rendered.manifest.payloadSha256 !== reported.payloadSha256)
      throw jobFailure(
        'render_failed',
        'the label renders differently than before the restart (was the printer configuration changed?)',
      );
    d.journal.setPreview(this.attemptId, rendered.preview);
    return reported ? { ...rendered, manifest: reported } : rendered;
  }

  /**
   * Sends the label once the printer is ready, the control plane has the manifest (`renderedRow`) and the
   * lease is confirmed (the check that keeps a stale attempt from printing).
   */
  private async send(
    rendered: RenderedLabel,
    renderedRow: number | null,
    reference: string,
  ): Promise<SpoolReceipt> {
    const d = this.deps;
    await Promise.all([this.waitReady(), renderedRow === null ? null : this.delivered(renderedRow)]);
    await this.lease!.openSendGate(d.jobs.minLeaseForSendMs);
    this.checkAbort();
    // Written ahead of the first byte: a restart after this point knows the label may be out.
    const intended: SpoolReceipt = {
      printer: d.printerConfig.name,
      transport: d.printer.transport.kind,
      bytes: rendered.payload.length,
      payloadSha256: sha256Hex(rendered.payload),
      reference: reference.slice(0, 500),
      submittedAt: new Date(d.now()).toISOString(),
    };
    d.journal.addEvidence(this.attemptId, 'sending', intended);
    this.labelMayBeOut = true;
    try {
      const receipt = await this.timed('device', () => d.printer.send(rendered.payload, reference));
      return { ...intended, bytes: receipt.bytes, reference: receipt.reference.slice(0, 500) };
    } catch (err) {
      // Some bytes may have reached the printer: only its buffer can tell whether a label can still come out.
      if (!inDoubt(err) || (await this.provablyNotOut(err))) throw err;
      this.log.warn({ err: toAgentError(err).toJSON() }, 'the send failed part-way; the label may be out');
      return intended;
    }
  }

  /**
   * The device's attestation when it has evidence of the print, else a supervisor's. Resumed with the label
   * sent before the restart (`sentBefore`): if the printer held it (cleared at start-up), it never came out
   * and is sent again; otherwise it may have come out while the agent was down, so only a person can say,
   * and nothing is sent unasked.
   */
  private async attest(
    rendered: RenderedLabel,
    claims: AidcEnvelopeClaims,
    sentBefore: boolean,
  ): Promise<Attestation> {
    const d = this.deps;
    if (sentBefore && !this.resume?.heldCleared)
      return this.awaitSupervisor(rendered, 'the agent restarted after sending this label');
    if (sentBefore) {
      d.journal.addEvidence(this.attemptId, 'resent_after_restart', true);
      await this.send(rendered, null, `${this.jobRef}-resent`);
      this.setStep('printing', 'sent again: the printer held it when the agent stopped');
    }
    let completion: Completion;
    try {
      completion = await this.awaitPrinted(rendered, claims);
    } catch (err) {
      if (!inDoubt(err) || (await this.provablyNotOut(err))) throw err;
      const e = toAgentError(err);
      this.log.warn({ err: e.toJSON() }, 'the label may be out; a supervisor decides');
      return this.awaitSupervisor(
        rendered,
        `the printer link failed after the label was sent (${e.message})`,
      );
    }
    return (
      deviceAttestation(d.deviceId, completion, d.printerConfig.attestation, new Date(d.now())) ??
      (await this.awaitSupervisor(rendered))
    );
  }

  /** The id of a result of this attempt still waiting in the outbox, if any. */
  /** Refuses to go on while the printer is out of paper, open, paused or silent; waits a while for it. */
  private async waitReady(): Promise<void> {
    const d = this.deps;
    const deadline = d.now() + d.printerConfig.readyTimeoutMs;
    for (;;) {
      let status: PrinterStatus | null;
      let offline = false;
      try {
        status = await this.timed('device', () => d.printer.status());
      } catch (err) {
        if (
          !isAgentError(err, 'PRINTER_NO_ANSWER') &&
          !isAgentError(err, 'TRANSPORT_ERROR') &&
          !isAgentError(err, 'TRANSPORT_CLOSED')
        )
          throw err;
        status = null;
        offline = true;
      }
      d.onPrinterStatus(status, this.jobRef, offline);
      if (!offline && (status === null || status.ready)) return;
      const why = offline ? 'printer does not answer' : status!.errors.join(', ');
      if (this.currentStep !== 'waiting_printer') this.setStep('waiting_printer', why);
      if (d.now() >= deadline)
        throw offline
          ? new AgentError('PRINTER_NO_ANSWER', `${d.printerConfig.name}: no answer`)
          : new AgentError('PRINTER_NOT_READY', `${d.printerConfig.name} is not ready: ${why}`, {
              details: { errors: status!.errors },
            });
      await sleep(d.notReadyRetryMs, this.signal);
    }
  }

  private async awaitPrinted(rendered: RenderedLabel, claims: AidcEnvelopeClaims): Promise<Completion> {
    const d = this.deps;
    try {
      return await this.timed('device', () =>
        d.printer.awaitCompletion({
          expectedEpc: rendered.rfid ? claims.sgtin96_epc : undefined,
          timeoutMs: d.printerConfig.printTimeoutMs,
          signal: this.signal,
          onStatus: (s) => d.onPrinterStatus(s, this.jobRef),
        }),
      );
    } catch (err) {
      // Whatever stays in the printer's buffer now belongs to a failed attempt: it must never print later.
      // (A lost line is the caller's: it asks the printer what it holds once it answers again.)
      if (!inDoubt(err))
        await d.printer
          .cancelHeld()
          .catch((e: unknown) => this.log.warn({ err: String(e) }, 'could not cancel held formats'));
      throw err;
    }
  }

  /**
   * After the label was sent and the printer link failed (`err`): asks the printer, for up to its ready
   * timeout, what it holds. Formats still held are cancelled, and then the label provably did not come out
   * (true: the job may fail and be printed again). Nothing held, or no answer: it may be out (false).
   */
  private async provablyNotOut(err: unknown): Promise<boolean> {
    const d = this.deps;
    if (!inDoubt(err) || !d.printer.twoWay) return false;
    const deadline = d.now() + d.printerConfig.readyTimeoutMs;
    this.setStep('waiting_printer', 'asking the printer whether the label came out');
    for (;;) {
      this.checkAbort();
      const status = await d.printer.status().catch(() => null);
      if (status) {
        if (status.formatsInBuffer === 0) return false;
        await d.printer.cancelHeld();
        this.log.info({ held: status.formatsInBuffer }, 'the label was still held in the printer; cancelled');
        return true;
      }
      if (d.now() >= deadline) return false;
      await sleep(d.notReadyRetryMs, this.signal);
    }
  }

  /**
   * Waits for a supervisor: an attestation of the label that came out, or a re-print of the same bytes
   * (they saw none, or voided it). The label may be out, so nothing here ends the attempt on the system's
   * say: an unanswered wait is asked again, and a re-print the printer cannot take yet waits for the
   * supervisor again. Only the supervisor's own fail (the console) or the agent stopping ends it.
   */
  private async awaitSupervisor(rendered: RenderedLabel, why?: string): Promise<Attestation> {
    const d = this.deps;
    let reprints = 0;
    for (;;) {
      this.setStep('awaiting_attestation', why);
      let answer: AttestationAnswer;
      try {
        answer = await this.timed('human', () =>
          d.humans.waitAttestation(this.jobRef, d.jobs.humanTimeoutMs, this.signal),
        );
      } catch (err) {
        if (this.signal.aborted) throw err;
        this.log.warn({ err: toAgentError(err).message }, 'still waiting for a supervisor');
        continue;
      }
      if (answer.kind === 'attest')
        return humanAttestation(
          answer.supervisor,
          new Date(d.now()),
          [why, reprints > 0 ? `${reprints} reprint(s) of the same label` : answer.note]
            .filter(Boolean)
            .join('; ') || undefined,
        );
      // The supervisor saw no usable label: the same bytes again, under the same checks as the first time.
      try {
        await this.waitReady();
        await this.lease!.confirm(d.jobs.minLeaseForSendMs);
        await this.timed('device', () =>
          d.printer.send(rendered.payload, `${this.jobRef}-reprint-${++reprints}`),
        );
      } catch (err) {
        if (this.signal.aborted || isLeaseLost(err)) throw err;
        this.log.warn({ err: toAgentError(err).message }, 'could not re-print; back to the supervisor');
        why = `the re-print did not reach the printer (${toAgentError(err).message})`;
        continue;
      }
      d.journal.addEvidence(this.attemptId, 'reprints', reprints);
      this.setStep('printing', `reprint ${reprints}`);
    }
  }

  private async scan(claims: AidcEnvelopeClaims, rendered: RenderedLabel): Promise<ScanResult> {
    const d = this.deps;
    let read: ScanRead;
    let scannerName: string;
    const config = d.printerConfig.scanner;
    if (!d.scanner || !config) {
      this.setStep('awaiting_scan');
      let manual: ManualScan | null = null;
      while (!manual) {
        // The label is out: an unanswered wait is asked again, never turned into a FAILED (and a re-print).
        manual = await this.timed('human', () =>
          d.humans.waitScan(this.jobRef, d.jobs.humanTimeoutMs, this.signal).catch((err: unknown) => {
            if (this.signal.aborted) throw err;
            this.log.warn('still waiting for a scan at the console');
            return null;
          }),
        );
      }
      read = { symbol: manual.data, epc: manual.epc };
      scannerName = 'console';
    } else {
      this.setStep('scanning');
      scannerName = d.scanner.name;
      const scanner = d.scanner;
      const once = () =>
        this.timed('device', () => scanner.scan({ timeoutMs: config.timeoutMs, signal: this.signal }));
      read = await once();
      for (let i = 0; read.symbol === null && i < config.retries; i++) read = await once();
    }
    if (read.symbol === null) throw jobFailure('scan_noread', 'the scanner decoded no QR on the label');
    if (read.symbol !== claims.digital_link)
      throw jobFailure(
        'scan_mismatch',
        `the label carries ${read.symbol.slice(0, 300)}, not the job Digital Link`,
      );
    const result: ScanResult = {
      scanner: scannerName.slice(0, 64),
      decodedLink: read.symbol,
      linkMatches: true,
      scannedAt: new Date(d.now()).toISOString(),
    };
    if (!rendered.rfid) return result;
    if (read.epc) {
      const epc = read.epc.toUpperCase();
      if (epc !== claims.sgtin96_epc)
        throw jobFailure('scan_epc_mismatch', `the tag reads ${epc}, not ${claims.sgtin96_epc}`);
      return { ...result, epcRead: epc, epcMatches: true };
    }
    if (read.epc === null && config?.readsRfid) throw jobFailure('scan_notag', 'no tag answered the scanner');
    return result;
  }

  private async failed(err: unknown): Promise<JobStep> {
    const e = toAgentError(err);
    this.deps.journal.setError(this.attemptId, {
      code: e.apiCode ?? e.code,
      message: e.message,
      reason: failureOf(err).reason,
    });
    if (
      isLeaseLost(e) ||
      (e.code === 'RESULT_REJECTED' && (e.apiCode === 'STALE_ATTEMPT' || e.apiCode === 'ENVELOPE_EXPIRED'))
    ) {
      // Not ours any more: a FAILED would be refused; the control plane's reaper and the next claim take over.
      this.log.warn({ err: e.toJSON() }, 'attempt lost');
      this.setStep('abandoned', e.message);
      return 'abandoned';
    }
    if (this.labelMayBeOut && isStopping(e)) {
      // The label may be out: a FAILED now would have it printed again. The attempt stays unfinished in the
      // journal; the next start resumes it (asks the printer, or a supervisor).
      this.log.warn('stopped with the label possibly out; the next start resumes this attempt');
      this.currentStep = 'abandoned';
      return 'abandoned';
    }
    if (this.sealedRow !== null && e.code !== 'RESULT_REJECTED') {
      // Stopped while SEALED was on its way: the outbox delivers it (now or after a restart); a FAILED
      // behind it would only be refused.
      this.setStep('abandoned', 'stopped while SEALED was being delivered; the outbox keeps it');
      return 'abandoned';
    }
    const failure = failureOf(err);
    this.log.warn({ failure, err: e.toJSON() }, 'job failed');
    const id = this.deps.outbox.enqueue({
      jobRef: this.jobRef,
      attemptId: this.attemptId,
      status: 'FAILED',
      evidence: { failure },
    }).id;
    this.deps.journal.addEvidence(this.attemptId, 'failure', failure);
    this.setStep('failed', failure.reason);
    // Give the FAILED a moment to land so the job is re-claimable at once; the outbox keeps it regardless.
    const left = Math.max(1000, Math.min(15_000, (this.lease?.leaseExpiresAt ?? 0) - this.deps.now()));
    await Promise.race([this.deps.outbox.settled(id), sleep(left)]).catch(() => undefined);
    return 'failed';
  }
}

/** Evidence journalled before a restart says the label may be out (sent, or its send begun). */
export function sentBefore(evidence: { spool_receipt?: unknown; sending?: unknown }): boolean {
  return evidence.spool_receipt !== undefined || evidence.sending !== undefined;
}

/** A failure of the printer link, or its silence: the label sent may or may not have come out. */
function inDoubt(err: unknown): boolean {
  const e = toAgentError(err);
  return (
    e.code === 'TRANSPORT_CLOSED' ||
    e.code === 'TRANSPORT_ERROR' ||
    e.code === 'PRINTER_NO_ANSWER' ||
    e.code === 'PRINT_TIMEOUT'
  );
}

/** The agent stopping (not a person's fail): see `PrinterWorker.stop`. */
function isStopping(e: AgentError): boolean {
  return e.code === 'JOB_ABORTED' && e.details?.reason === 'agent_stopped';
}

/** The claims a resumed attempt started with, if the fresh envelope is about the same label. */
function sameLabel(before: AidcEnvelopeClaims, fresh: AidcEnvelopeClaims): AidcEnvelopeClaims {
  const same =
    before.job_ref === fresh.job_ref &&
    before.attempt_id === fresh.attempt_id &&
    before.gtin === fresh.gtin &&
    before.serial === fresh.serial &&
    before.digital_link === fresh.digital_link &&
    before.sgtin96_epc === fresh.sgtin96_epc;
  if (!same)
    throw jobFailure(
      'envelope_mismatch',
      'the fresh envelope is about another label than the one journalled',
    );
  return before;
}

function refused(s: Settlement): AgentError {
  return new AgentError(
    'RESULT_REJECTED',
    `the control plane refused a result: ${s.code ?? s.state}${s.message ? ` (${s.message})` : ''}`,
    {
      apiCode: s.code ?? undefined,
      status: s.httpStatus ?? undefined,
    },
  );
}
