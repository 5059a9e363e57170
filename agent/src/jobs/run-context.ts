/**
 * What a job run is made of and what its steps see. `JobRun` (pipeline.ts) drives one attempt from the
 * envelope to SEALED; the steps that talk to a device or wait for a person (print-step.ts, printer-steps.ts,
 * supervisor-step.ts, scan-step.ts) get a `RunContext`: the run's dependencies, its abort signal, and the
 * way to move its step and count its time.
 */
import type { AidcEnvelopeClaims, PrinterStatus } from '@dpp/shared';
import type { Claimed, ControlPlaneClient } from '../api/index.js';
import type { AgentConfig, PrinterConfig } from '../config/index.js';
import type { DeviceKey } from '../identity/index.js';
import type { Logger } from '../log.js';
import type { Outbox } from '../outbox/index.js';
import type { PrinterDriver } from '../printers/index.js';
import type { ScanRead, Scanner } from '../scanners/index.js';
import type { HumanGate } from './human-gate.js';
import type { JobJournal } from './journal.js';
import type { LeaseKeeper } from './lease.js';
import type { LaneTicket, PrintLane } from './print-lane.js';
import type { JobStep } from './steps.js';

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
   * Time the job waited on the printer (status, until it is ready, send, print to read-back) or the scanner. Results the outbox
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
  /** The formats this printer holds, shared by the runs on it (print-lane.ts). */
  lane: PrintLane;
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

/** What a step of a run sees of it. */
export interface RunContext {
  readonly deps: PipelineDeps;
  readonly jobRef: string;
  readonly attemptId: string;
  /** Aborted when the job is cancelled, its lease is lost, or a result of it is refused. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** The lease keeper; running from before the first step. */
  readonly lease: LeaseKeeper;
  /** This run's format in the printer's lane, from the first byte sent until it is settled. */
  ticket: LaneTicket | null;
  /** The scanner's read of the label, started the moment the printer said it was out (scan-step.ts). */
  firstRead: Promise<ScanRead> | null;
  /** The step the run is at. */
  step(): JobStep;
  setStep(step: JobStep, detail?: string): void;
  /** Runs `fn` and counts its time as device (or human) time. */
  timed<T>(kind: 'device' | 'human', fn: () => Promise<T>): Promise<T>;
  /** Throws the abort reason once the run was aborted. */
  checkAbort(): void;
  /** The send gate opened: from here on the run never ends in FAILED on the system's say. */
  labelMayBeOut(): void;
}
