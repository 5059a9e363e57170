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
 *
 * The steps that talk to a device or wait for a person have their own modules, given a `RunContext`
 * (run-context.ts): print-step.ts (send through the send gate, attest), printer-steps.ts (ready, printed,
 * did it come out), supervisor-step.ts, scan-step.ts; resume.ts holds what a resume starts from.
 */
import {
  EVIDENCE_KIND,
  type AidcEnvelopeClaims,
  type EvidenceOf,
  type RenderManifest,
  type ResultState,
  publicAttestation,
} from '@dpp/shared';
import { AgentError, toAgentError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Settlement } from '../outbox/index.js';
import { renderLabel, type RenderedLabel } from '../render/index.js';
import { abortReason, deferred, sleep } from '../util/time.js';
import { signEvidenceBundle } from './evidence-bundle.js';
import { failureOf, jobFailure } from './failures.js';
import { LeaseKeeper, isLeaseLost } from './lease.js';
import { attestPrint, sendLabel } from './print-step.js';
import { sameLabel, sentBefore, type Reported, type Resume } from './resume.js';
import type { PipelineDeps, RunContext, RunStart } from './run-context.js';
import { scanLabel } from './scan-step.js';
import { FINAL_STEPS, type JobStep } from './steps.js';

export type { JobStepEvent, JobTimings, PipelineDeps, RunStart } from './run-context.js';
export { sentBefore, type Resume } from './resume.js';

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
  /** Device waits in progress (the scanner may read while the printer is asked its status), and since when. */
  private deviceWaits = 0;
  private deviceSince = 0;
  /** Set once SEALED is queued: from then on the outbox finishes the job, whatever happens here. */
  private sealedRow: number | null = null;
  /** What the steps in their own modules see of this run; made once its lease keeper runs. */
  private ctx!: RunContext;
  private readonly labelSent = new Latch();
  /**
   * Settles once the label was handed to the printer (or the run ended before): from then on the printer's
   * worker may claim the next job and have it ready behind this one.
   */
  readonly sent: Promise<void> = this.labelSent.promise;

  /** The label was handed to the printer, or the run ended: see `sent`. */
  get hasSent(): boolean {
    return this.labelSent.settled;
  }

  private readonly labelCleared = new Latch();
  /**
   * Settles once the label is out and scanned (the printer's evidence or a person's attestation, then the
   * scanner's read or one entered at the console), or the run ended before: from then on it no longer holds
   * one of the printer's places (one label printing, one behind it).
   */
  readonly cleared: Promise<void> = this.labelCleared.promise;

  /** The label is out and scanned, or the run ended: see `cleared`. */
  get isCleared(): boolean {
    return this.labelCleared.settled;
  }

  /** The lane held this run's label until the printer was empty (the scanner's window, print-lane.ts). */
  get heldForScan(): boolean {
    return this.ctx?.ticket?.heldForScan ?? false;
  }

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

  /** Runs `fn` and counts its time as device (or human) time; device waits that overlap count once. */
  private async timed<T>(kind: 'device' | 'human', fn: () => Promise<T>): Promise<T> {
    const t0 = this.deps.now();
    if (kind === 'device' && this.deviceWaits++ === 0) this.deviceSince = t0;
    try {
      return await fn();
    } finally {
      if (kind === 'human') this.humanMs += this.deps.now() - t0;
      else if (--this.deviceWaits === 0) this.deviceMs += this.deps.now() - this.deviceSince;
    }
  }

  private checkAbort(): void {
    if (this.signal.aborted) throw abortReason(this.signal);
  }

  /** Queues a result and notes its evidence in the journal, in one transaction (what a resume reads). */
  private report<S extends ResultState>(status: S, value: EvidenceOf<S>): number {
    const kind = EVIDENCE_KIND[status];
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
    try {
      return await this.runSteps();
    } finally {
      this.labelSent.settle();
      this.labelCleared.settle();
    }
  }

  private async runSteps(): Promise<JobStep> {
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
        evidence: { [EVIDENCE_KIND.FAILED]: f },
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
    this.ctx = {
      deps: this.deps,
      jobRef: this.jobRef,
      attemptId: this.attemptId,
      signal: this.signal,
      log: this.log,
      lease,
      ticket: this.resume?.sent ?? null,
      firstRead: null,
      step: () => this.currentStep,
      setStep: (step, detail) => this.setStep(step, detail),
      timed: (kind, fn) => this.timed(kind, fn),
      checkAbort: () => this.checkAbort(),
      labelMayBeOut: () => void (this.labelMayBeOut = true),
    };
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
      this.deps.lane.settle(this.ctx.ticket);
      this.deps.lane.scanned(this.attemptId);
      this.labelSent.settle();
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
      : this.report('RENDERED', rendered.manifest as RenderManifest);
    this.setStep('rendered');

    // Sent before a restart: the label may be out whether or not SPOOL_SUBMITTED was reported.
    const before = sentBefore(done);
    if (before) this.labelMayBeOut = true;
    // Its label may be out and is not scanned: nothing else comes out over it until it is.
    if (before && !done.scan_result) d.lane.hold(this.attemptId);
    let spool = done.spool_receipt;
    if (!spool) {
      spool =
        done.sending ??
        (await sendLabel(
          this.ctx,
          rendered,
          this.jobRef,
          renderedRow === null ? null : this.delivered(renderedRow),
        ));
      this.report('SPOOL_SUBMITTED', spool);
      this.setStep('printing');
    }
    this.labelSent.settle();
    let attestation = done.attestation;
    if (!attestation) {
      attestation = await attestPrint(this.ctx, rendered, claims, {
        sentBefore: before,
        heldCleared: this.resume?.heldCleared ?? false,
      });
      this.report('PRINTED_ATTESTED', attestation);
      this.setStep('attested', `${attestation.actor.type} ${attestation.method}`);
    }
    let scan = done.scan_result;
    if (!scan) {
      try {
        scan = await scanLabel(this.ctx, claims, rendered);
      } finally {
        d.lane.scanned(this.attemptId);
      }
      this.report('SCAN_VERIFIED', scan);
    }
    this.labelCleared.settle();
    this.setStep('scanned');

    this.setStep('sealing');
    const jws = await signEvidenceBundle(
      {
        jobRef: this.jobRef,
        attemptId: this.attemptId,
        deviceId: d.deviceId,
        envelopeJti: claims.jti,
        passportVersion: claims.passport_version,
        renderManifest: rendered.manifest as RenderManifest,
        spoolReceipt: spool,
        attestation: publicAttestation(attestation),
        scanResult: scan,
        sealedAt: new Date(d.now()).toISOString(),
      },
      d.key,
    );
    this.sealedRow = this.report('SEALED', { jws });
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
      evidence: { [EVIDENCE_KIND.FAILED]: failure },
    }).id;
    this.deps.journal.addEvidence(this.attemptId, EVIDENCE_KIND.FAILED, failure);
    this.setStep('failed', failure.reason);
    // Give the FAILED a moment to land so the job is re-claimable at once; the outbox keeps it regardless.
    const left = Math.max(1000, Math.min(15_000, (this.lease?.leaseExpiresAt ?? 0) - this.deps.now()));
    await Promise.race([this.deps.outbox.settled(id), sleep(left)]).catch(() => undefined);
    return 'failed';
  }
}

/** A promise settled once, that also says whether it has been. */
class Latch {
  private done = false;
  private readonly gate = deferred<void>();
  readonly promise = this.gate.promise;

  get settled(): boolean {
    return this.done;
  }

  settle(): void {
    this.done = true;
    this.gate.resolve();
  }
}

/** The agent stopping (not a person's fail): see `PrinterWorker.stop`. */
function isStopping(e: AgentError): boolean {
  return e.code === 'JOB_ABORTED' && e.details?.reason === 'agent_stopped';
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
