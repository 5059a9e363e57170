/** What `GET /api/status` and `GET /api/jobs/{ref}` show (the console page reads these types too). */
import type {
  Attestation,
  Failure,
  LabelTemplate,
  RenderManifest,
  ScanResult,
  SpoolReceipt,
} from '@dpp/shared';
import type { Identity } from '../identity/index.js';
import type { HumanGate, JobJournal, PrinterView, PrinterWorker } from '../jobs/index.js';
import type { MqttLink, MqttState } from '../mqtt/index.js';
import type { Outbox } from '../outbox/index.js';
import { AGENT_VERSION } from '../identity/index.js';

export interface AgentStatusView {
  agentVersion: string;
  startedAt: string;
  device: { id: string; name: string; tenantId: string; site: string | null };
  connections: { controlPlane: { url: string; reachable: boolean }; mqtt: { state: MqttState } };
  printers: PrinterView[];
  jobs: {
    current: Array<{
      jobRef: string;
      attemptId: string;
      printer: string;
      step: string;
      waitingFor: string | null;
      /** Resumed after the agent restarted with this attempt's label already sent (see the pipeline). */
      resumedAfterSend: boolean;
    }>;
    recent: Array<{
      jobRef: string;
      attemptId: string;
      printer: string;
      serial: string;
      step: string;
      error: string | null;
      updatedAt: string;
    }>;
  };
  outbox: Record<string, number>;
}

interface Parts {
  identity: Identity;
  baseUrl: string;
  journal: JobJournal;
  outbox: Outbox;
  humans: HumanGate;
  workers: PrinterWorker[];
  mqtt: MqttLink | null;
}

export function agentStatus(agent: { startedAt: string }, p: Parts): AgentStatusView {
  return {
    agentVersion: AGENT_VERSION,
    startedAt: agent.startedAt,
    device: {
      id: p.identity.deviceId,
      name: p.identity.name,
      tenantId: p.identity.tenantId,
      site: p.identity.site,
    },
    connections: {
      controlPlane: { url: p.baseUrl, reachable: p.outbox.controlPlaneReachable },
      mqtt: { state: p.mqtt?.state ?? 'disabled' },
    },
    printers: p.workers.map((w) => w.view()),
    jobs: {
      current: p.workers.flatMap((w) =>
        w.active.map((r) => ({
          jobRef: r.jobRef,
          attemptId: r.attemptId,
          printer: w.name,
          step: r.step,
          waitingFor: p.humans.waitingFor(r.jobRef),
          resumedAfterSend: r.resumedAfterSend,
        })),
      ),
      recent: p.journal.recent(50).map((e) => ({
        jobRef: e.jobRef,
        attemptId: e.attemptId,
        printer: e.printer,
        serial: e.serial,
        step: e.step,
        error: e.error ? `${e.error.reason ?? e.error.code}: ${e.error.message}` : null,
        updatedAt: e.updatedAt,
      })),
    },
    outbox: p.outbox.counts(),
  };
}

/** The evidence an attempt gathered on this device, by kind, as the journal keeps it. */
export interface AttemptEvidenceView {
  render_manifest?: RenderManifest;
  spool_receipt?: SpoolReceipt;
  attestation?: Attestation;
  scan_result?: ScanResult;
  evidence_bundle?: { jws: string };
  failure?: Failure;
  /** How many times the same label was sent again on a supervisor's say. */
  reprints?: number;
}

export interface AgentJobView {
  jobRef: string;
  waitingFor: 'attestation' | 'scan' | null;
  previewUrl: string;
  /** Newest first. */
  attempts: Array<{
    attemptId: string;
    printer: string;
    step: string;
    gtin: string;
    serial: string;
    digitalLink: string;
    /** The label's EPC, of either scheme (the name is the first one's). */
    sgtin96Epc: string;
    envelopeJti: string;
    labelTemplate: LabelTemplate;
    evidence: AttemptEvidenceView;
    error: { code: string; message: string; reason?: string } | null;
    claimedAt: string;
    updatedAt: string;
    finishedAt: string | null;
  }>;
  /** The results this device queued for the control plane, and how their delivery went. */
  results: Array<{
    attemptId: string;
    status: string;
    delivery: string;
    tries: number;
    httpStatus: number | null;
    error: string | null;
    message: string | null;
    queuedAt: string;
    settledAt: string | null;
  }>;
}

export function jobDetail(jobRef: string, p: Parts): AgentJobView | null {
  const attempts = p.journal.attempts(jobRef);
  if (attempts.length === 0) return null;
  return {
    jobRef,
    waitingFor: p.humans.waitingFor(jobRef),
    previewUrl: `/api/jobs/${jobRef}/preview.png`,
    attempts: attempts.map((a) => ({
      attemptId: a.attemptId,
      printer: a.printer,
      step: a.step,
      gtin: a.gtin,
      serial: a.serial,
      digitalLink: a.digitalLink,
      sgtin96Epc: a.epc,
      envelopeJti: a.envelopeJti,
      labelTemplate: a.claims.label_template,
      evidence: a.evidence as AttemptEvidenceView,
      error: a.error,
      claimedAt: a.claimedAt,
      updatedAt: a.updatedAt,
      finishedAt: a.finishedAt,
    })),
    results: p.outbox.rowsOf(jobRef).map((r) => ({
      attemptId: r.attempt_id,
      status: r.status,
      delivery: r.state,
      tries: r.tries,
      httpStatus: r.http_status,
      error: r.error_code,
      message: r.error_message,
      queuedAt: r.created_at,
      settledAt: r.settled_at,
    })),
  };
}
