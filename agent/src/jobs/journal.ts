/**
 * The local journal of jobs (SQLite, beside the outbox): one row per attempt this device worked on, with
 * its step, the envelope claims, the evidence gathered and the QR preview, for the console and
 * `dpp-agent status`. The control plane stays the source of truth; this is what the device saw and did.
 */
import type { AidcEnvelopeClaims } from '@dpp/shared';
import type { AgentDatabase } from '../store/index.js';
import type { JobStep } from './steps.js';

export interface JournalEntry {
  jobRef: string;
  attemptId: string;
  printer: string;
  step: JobStep;
  gtin: string;
  serial: string;
  digitalLink: string;
  /** The label's EPC (SGTIN-96 or SGTIN-198), upper-case hex; '' for a claim that names none. */
  epc: string;
  envelopeJti: string;
  claims: AidcEnvelopeClaims;
  evidence: Record<string, unknown>;
  error: { code: string; message: string; reason?: string } | null;
  hasPreview: boolean;
  claimedAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

interface Row {
  attempt_id: string;
  job_ref: string;
  printer: string;
  step: JobStep;
  gtin: string;
  serial: string;
  digital_link: string;
  sgtin96_epc: string;
  envelope_jti: string;
  claims: string;
  evidence: string;
  has_preview: number;
  error: string | null;
  claimed_at: string;
  updated_at: string;
  finished_at: string | null;
}

const COLUMNS = `attempt_id, job_ref, printer, step, gtin, serial, digital_link, sgtin96_epc, envelope_jti, claims,
  evidence, preview is not null as has_preview, error, claimed_at, updated_at, finished_at`;

function entryOf(r: Row): JournalEntry {
  return {
    jobRef: r.job_ref,
    attemptId: r.attempt_id,
    printer: r.printer,
    step: r.step,
    gtin: r.gtin,
    serial: r.serial,
    digitalLink: r.digital_link,
    epc: r.sgtin96_epc,
    envelopeJti: r.envelope_jti,
    claims: JSON.parse(r.claims) as AidcEnvelopeClaims,
    evidence: JSON.parse(r.evidence) as Record<string, unknown>,
    error: r.error ? (JSON.parse(r.error) as JournalEntry['error']) : null,
    hasPreview: r.has_preview === 1,
    claimedAt: r.claimed_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
  };
}

export class JobJournal {
  constructor(
    private readonly db: AgentDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** Runs `fn` in one transaction of the agent's database (the journal and the outbox share it). */
  atomically<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  record(printer: string, claims: AidcEnvelopeClaims): void {
    const at = this.iso();
    this.db
      .prepare(
        `insert into jobs (attempt_id, job_ref, printer, step, gtin, serial, digital_link, sgtin96_epc, envelope_jti,
           claims, claimed_at, updated_at)
         values (?, ?, ?, 'claimed', ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (attempt_id) do nothing`,
      )
      .run(
        claims.attempt_id,
        claims.job_ref,
        printer,
        claims.gtin,
        claims.serial,
        claims.digital_link,
        // The column keeps its first name; it holds the EPC of either scheme.
        claims.epc?.hex ?? claims.sgtin96_epc ?? '',
        claims.jti,
        JSON.stringify(claims),
        at,
        at,
      );
  }

  step(attemptId: string, step: JobStep, final = false): void {
    const at = this.iso();
    this.db
      .prepare(
        'update jobs set step = ?, updated_at = ?, finished_at = case when ? then ? else finished_at end where attempt_id = ?',
      )
      .run(step, at, final ? 1 : 0, at, attemptId);
  }

  addEvidence(attemptId: string, kind: string, value: unknown): void {
    this.db
      .prepare(
        `update jobs set evidence = json_set(evidence, '$.' || ?, json(?)), updated_at = ? where attempt_id = ?`,
      )
      .run(kind, JSON.stringify(value), this.iso(), attemptId);
  }

  setPreview(attemptId: string, png: Buffer): void {
    this.db.prepare('update jobs set preview = ? where attempt_id = ?').run(png, attemptId);
  }

  setError(attemptId: string, error: { code: string; message: string; reason?: string }): void {
    this.db
      .prepare('update jobs set error = ?, updated_at = ? where attempt_id = ?')
      .run(JSON.stringify(error), this.iso(), attemptId);
  }

  /** Every attempt of a job this device worked on, newest first. */
  attempts(jobRef: string): JournalEntry[] {
    return (
      this.db
        .prepare(`select ${COLUMNS} from jobs where job_ref = ? order by claimed_at desc, rowid desc`)
        .all(jobRef) as Row[]
    ).map(entryOf);
  }

  preview(jobRef: string): Buffer | null {
    const r = this.db
      .prepare(
        'select preview from jobs where job_ref = ? and preview is not null order by claimed_at desc, rowid desc limit 1',
      )
      .get(jobRef) as { preview: Buffer } | undefined;
    return r?.preview ?? null;
  }

  recent(limit: number): JournalEntry[] {
    return (
      this.db
        .prepare(`select ${COLUMNS} from jobs order by updated_at desc, rowid desc limit ?`)
        .all(limit) as Row[]
    ).map(entryOf);
  }

  /** Attempts left unfinished (the agent stopped or crashed while working on them). */
  unfinished(): JournalEntry[] {
    return (
      this.db
        .prepare(`select ${COLUMNS} from jobs where finished_at is null order by claimed_at`)
        .all() as Row[]
    ).map(entryOf);
  }

  prune(keep: number): number {
    return this.db
      .prepare(
        `delete from jobs where finished_at is not null and rowid not in
           (select rowid from jobs order by updated_at desc, rowid desc limit ?)`,
      )
      .run(keep).changes;
  }
}
