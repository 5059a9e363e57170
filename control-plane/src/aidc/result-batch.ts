/**
 * A batch of results (`POST /aidc/jobs/results`) applied set-wise: the batch reads what its checks need
 * at once, runs every result's checks against those rows with the results accepted before it applied,
 * then writes the accepted ones with a few statements for all of them instead of a dozen for each.
 */
import { type CompiledQuery, sql } from 'kysely';
import { type AuditEntry, addAudits } from '../audit/index.js';
import {
  type Db,
  type IdempotencyKeyRef,
  type IdempotencyKeyTable,
  type OperationKey,
  type PrintAttemptTable,
  type PrintEvidenceTable,
  type PrintJobTable,
  type SealReceiptTable,
  deleteExpiredIdempotencyKeys,
  idempotencyKeysQuery,
  completedIdempotencyKeyInserts,
  isPostgres,
  prepared,
  readTogether,
  WriteSet,
} from '../store/index.js';
import { compiledCondition } from './claim.js';
import { type JobView, jobView } from './model.js';
import { PrincipalMoved } from './refusal.js';
import type { PrintLoopPort, SerialRead } from './port.js';
import {
  type BundleSignature,
  type Reporter,
  type ResultDeps,
  type ResultInput,
  type ResultOutcome,
  type ResultReads,
  applyResult,
  checkResult,
  databaseReads,
  evidenceRow,
  liveAt,
  resultAudit,
  sealOutcome,
  sealReceipt,
  transitionOf,
  verifyBundleSignature,
} from './result.js';

/** One result of a batch: the job, the result and its own Idempotency-Key. */
export interface BatchedResult {
  jobRef: string;
  input: ResultInput;
  idempotency: OperationKey<JobView>;
}

/** A batched result's outcome: the job after it, or why it was refused (the error the single route throws). */
export type BatchedOutcome = ({ ok: true } & ResultOutcome) | { ok: false; error: unknown };

/**
 * Applies results that happen together in order: each one exactly as {@link reportResult} would (its own
 * checks, guarded transition, evidence, audit entry and Idempotency-Key); a refused result writes nothing
 * and the others still apply; a later result of the same job sees the earlier ones. What commits is what each
 * answer says. A database failure of the whole (not of one result) fails the batch: nothing of it committed,
 * so all of it may be sent again.
 *
 * The checks run against rows read at the start, and the writes go out set-wise, each job's one guarded
 * UPDATE naming the state, attempt and live lease the checks saw, and the seal's serials the print_status
 * read. When a write finds the database other than read (another writer moved a job, reported a serial,
 * or a twin kept one of the keys) or fails, nothing of the writes stands and the batch is applied again
 * result by result in a transaction, as the single route would, so the answers never rest on the rows read
 * at the start being fresh.
 *
 * On SQLite the reads and the writes share one transaction. On PostgreSQL, where each is a round trip,
 * the reads are one statement (one snapshot) and the writes, when they fit one, another that stands alone
 * (store/write-set.ts `flushAlone`): a transaction around them would add BEGIN and COMMIT and hold nothing
 * the guards do not already check (READ COMMITTED locks no row that is only read).
 */
export async function reportResults(
  deps: ResultDeps,
  principal: Reporter,
  batch: readonly BatchedResult[],
  correlationId: string,
): Promise<BatchedOutcome[]> {
  const iso = new Date(deps.now()).toISOString();
  const signatures = bundleSignatures(principal, batch);
  // The checks keep the evidence as parsed; a batch applied again result by result starts from the request.
  const sent = batch.map((b) => b.input.evidence);
  const setWise = async (db: Db, alone: boolean): Promise<BatchedOutcome[]> => {
    const records = await BatchRecords.read(db, deps.port, principal, batch);
    const writes = new BatchWrites(principal, correlationId, iso);
    const out: BatchedOutcome[] = [];
    for (const item of batch) {
      try {
        const key = item.idempotency;
        const earlier = key.answerIn(records.keyRow(key.ref));
        if (earlier) {
          out.push({ ok: true, job: earlier, replayed: true });
          continue;
        }
        const job = await checkResult(records, principal, item.jobRef, item.input, iso, signatures.get(item));
        out.push({ ok: true, job: writes.accept(records, job, item), replayed: false });
      } catch (err) {
        // The single route's second look at the key finds the row read above: a refusal stays one.
        out.push({ ok: false, error: err });
      }
    }
    if (writes.empty) return out;
    try {
      await writes.flush(db, deps, records, alone);
    } catch (err) {
      throw new SetWiseFailed(err);
    }
    return out;
  };
  const outcomes = await (
    isPostgres(deps.db) ? setWise(deps.db, true) : deps.db.transaction().execute((trx) => setWise(trx, false))
  ).catch((err: unknown) => {
    if (!(err instanceof SetWiseFailed)) throw err;
    // Nothing of the writes stood (the transaction is rolled back whole, with no savepoint to keep it: two
    // round trips a batch; or the one statement failed), and the batch is applied again result by result in
    // a new transaction, from the request as sent.
    batch.forEach((b, i) => (b.input.evidence = sent[i]!));
    return deps.db
      .transaction()
      .execute((trx) => applyOneByOne(trx, deps, principal, batch, correlationId, iso, signatures));
  });
  if (outcomes.some((o) => o.ok && !o.replayed && o.job.state === 'SEALED')) deps.onSealed?.();
  return outcomes;
}

/** The set-wise writes of a batch failed or found the database moved: the batch goes result by result. */
class SetWiseFailed extends Error {
  constructor(cause: unknown) {
    super('the set-wise writes of a results batch could not stand', { cause });
  }
}

/**
 * Each result exactly as the single route applies it, in a savepoint of its own: what a batch falls back
 * to when its set-wise writes cannot stand.
 */
async function applyOneByOne(
  trx: Db,
  deps: ResultDeps,
  principal: Reporter,
  batch: readonly BatchedResult[],
  correlationId: string,
  iso: string,
  signatures: Map<BatchedResult, BundleSignature>,
): Promise<BatchedOutcome[]> {
  const out: BatchedOutcome[] = [];
  for (const item of batch) {
    await sql`savepoint result_item`.execute(trx);
    try {
      const { jobRef, input, idempotency } = item;
      const applied = await applyResult(
        trx,
        deps,
        principal,
        jobRef,
        input,
        idempotency,
        correlationId,
        iso,
        signatures.get(item),
      );
      out.push({ ok: true, ...applied });
      await sql`release savepoint result_item`.execute(trx);
    } catch (err) {
      await sql`rollback to savepoint result_item`.execute(trx);
      await sql`release savepoint result_item`.execute(trx);
      // A twin under the same key committed meanwhile (another replica): its answer is this one's.
      const twin = await item.idempotency.earlier(trx).catch(() => null);
      out.push(twin ? { ok: true, job: twin, replayed: true } : { ok: false, error: err });
    }
  }
  return out;
}

/**
 * The signatures of a device's SEALED bundles in a batch, checked before the transaction with the key its call
 * was authenticated with (a bundle that names another device, or a key rotated meanwhile, is checked again
 * inside with the key read there, as for one result).
 */
function bundleSignatures(
  principal: Reporter,
  batch: readonly BatchedResult[],
): Map<BatchedResult, BundleSignature> {
  const out = new Map<BatchedResult, BundleSignature>();
  const key = principal.publicJwk;
  if (principal.type !== 'device' || key === undefined) return out;
  for (const b of batch) {
    if (b.input.status !== 'SEALED') continue;
    const jws = (b.input.evidence.evidence_bundle as { jws?: unknown } | undefined)?.jws;
    if (typeof jws === 'string') out.set(b, verifyBundleSignature(key, jws));
  }
  return out;
}

type AttemptRow = Pick<
  PrintAttemptTable,
  'attempt_id' | 'job_ref' | 'device_id' | 'envelope_jti' | 'passport_version_id' | 'failure_reason'
>;

const keyOf = (ref: IdempotencyKeyRef) => `${ref.tenantId}\n${ref.route}\n${ref.key}`;

/** Keys by their owner and route (a batch's all share one), each group read or deleted in one statement. */
function byOwner(refs: readonly IdempotencyKeyRef[]): { owner: IdempotencyKeyRef; keys: string[] }[] {
  const groups = new Map<string, { owner: IdempotencyKeyRef; keys: Set<string> }>();
  for (const ref of refs) {
    const at = `${ref.tenantId}\n${ref.route}`;
    const group = groups.get(at) ?? { owner: ref, keys: new Set<string>() };
    group.keys.add(ref.key);
    groups.set(at, group);
  }
  return [...groups.values()].map((g) => ({ owner: g.owner, keys: [...g.keys] }));
}

/** A row of the batch's read of attempts, their versions and the evidence of the attempts it names. */
interface AttemptReadRow extends AttemptRow {
  version_id: string | null;
  content_hash: string | null;
  merkle_root: string | null;
  kind: string | null;
  payload: string | null;
}

type DeviceKeyRow = Awaited<ReturnType<ResultReads['device']>>;

/**
 * The batch's jobs, by key alone (the tenant compared after): with the tenant in the WHERE, SQLite walks the
 * tenant's jobs on an index that starts with tenant_id instead of probing the primary key once per job.
 */
const jobsByRef = prepared((trx: Db, jobRefs: readonly string[]) =>
  trx.selectFrom('print_jobs').selectAll().where('job_ref', 'in', jobRefs),
);

/**
 * The jobs' attempts with the evidence of the attempts the batch names and the passport version each attempt
 * printed (a seal's receipt names it): a row per attempt and evidence. Another tenant's are read and left (their
 * jobs are).
 */
const attemptsOfJobs = prepared((trx: Db, jobRefs: readonly string[], named: readonly string[]) =>
  trx
    .selectFrom('print_attempts as a')
    .leftJoin('passport_versions as v', 'v.id', 'a.passport_version_id')
    .leftJoin('print_evidence as e', (join) =>
      join.onRef('e.attempt_id', '=', 'a.attempt_id').on('e.attempt_id', 'in', named),
    )
    .select([
      'a.attempt_id',
      'a.job_ref',
      'a.device_id',
      'a.envelope_jti',
      'a.passport_version_id',
      'a.failure_reason',
      'v.id as version_id',
      'v.content_hash',
      'v.merkle_root',
      'e.kind',
      'e.payload',
    ])
    .where('a.job_ref', 'in', jobRefs),
);

const deviceKeyOf = prepared((trx: Db, deviceId: string) =>
  trx.selectFrom('devices').select(['public_jwk', 'key_thumbprint']).where('id', '=', deviceId),
);

const serialReads = new WeakMap<
  PrintLoopPort,
  (trx: Db, tenantId: string, jobRefs: readonly string[]) => CompiledQuery<object>
>();

/**
 * For SEALED, the serials the seal reports printed (their print_status decides the commissioning): the tenant's
 * serials of the jobs, by key alone (as the jobs: with the tenant in the subquery SQLite walks the tenant's jobs,
 * 0.26 ms a read with 2,000 of them; another tenant's job names none of ours that a check lets through). One
 * prepared read per port (the carriers domain writes it).
 */
function serialsOfJobs(port: PrintLoopPort) {
  let read = serialReads.get(port);
  if (!read) {
    read = prepared((trx: Db, tenantId: string, jobRefs: readonly string[]) =>
      port.serialsRead(
        trx,
        tenantId,
        trx.selectFrom('print_jobs').select('serial').where('job_ref', 'in', jobRefs),
      ),
    );
    serialReads.set(port, read);
  }
  return read;
}

/**
 * What a batch's checks read, read at once at the start of its transaction: its jobs; their attempts with
 * the evidence of the attempts it names and the passport version each printed (one statement); its keys;
 * and for SEALED the device. As the
 * batch accepts results, their effects are applied here, so a later result sees the earlier ones.
 */
class BatchRecords implements ResultReads {
  private constructor(
    private readonly db: Db,
    private readonly tenantId: string,
    private readonly jobs: Map<string, PrintJobTable>,
    private readonly attempts: Map<string, AttemptRow>,
    private readonly recorded: Map<string, Map<string, string>>,
    private readonly keys: Map<string, IdempotencyKeyTable>,
    private readonly devices: Map<string, Promise<Awaited<ReturnType<ResultReads['device']>>>>,
    private readonly versions: Map<string, Promise<Awaited<ReturnType<ResultReads['passportVersion']>>>>,
    /** The serials of the jobs the batch may seal, as the carriers domain read them (none without SEALED). */
    readonly serials: SerialRead,
  ) {}

  /**
   * Every read in one read set (store/read-set.ts): on PostgreSQL one round trip and one snapshot, so a
   * twin's change seen in a job is seen in its key too (and the job's guarded UPDATE catches any change
   * after).
   */
  static async read(
    trx: Db,
    port: PrintLoopPort,
    principal: Reporter,
    batch: readonly BatchedResult[],
  ): Promise<BatchRecords> {
    const jobRefs = [...new Set(batch.map((b) => b.jobRef))];
    const sealingRefs = [...new Set(batch.filter((b) => b.input.status === 'SEALED').map((b) => b.jobRef))];
    // The attempts the batch names, whose evidence is read with them.
    const named = new Set(batch.map((b) => b.input.attempt_id));
    const owners = byOwner(batch.map((b) => b.idempotency.ref));
    const sealing = principal.type === 'device' && batch.some((b) => b.input.status === 'SEALED');
    const reads: Record<string, CompiledQuery<unknown>> = {
      jobs: jobsByRef(trx, jobRefs),
      attempts: attemptsOfJobs(trx, jobRefs, [...named]),
      ...(sealingRefs.length > 0
        ? { serials: serialsOfJobs(port)(trx, principal.tenantId, sealingRefs) }
        : {}),
      // For SEALED, the reporting device's key (the versions came with the attempts).
      ...(sealing ? { device: deviceKeyOf(trx, principal.id) } : {}),
    };
    owners.forEach(({ owner, keys }, i) => (reads[`keys${i}`] = idempotencyKeysQuery(trx, owner, keys)));
    // A remembered device is checked with the rows, in the same snapshot (its call read nothing before).
    const { stillCurrent } = principal;
    if (stillCurrent) {
      reads.principal = compiledCondition(trx, stillCurrent);
    }
    const read = await readTogether(trx, reads);
    if (stillCurrent && !(read.principal as { holds: unknown }[])[0]!.holds) throw new PrincipalMoved();

    const jobs = (read.jobs as PrintJobTable[]).filter((j) => j.tenant_id === principal.tenantId);
    const own = new Set(jobs.map((j) => j.job_ref));
    const attempts = new Map<string, AttemptRow>();
    const versions = new Map<string, Promise<Awaited<ReturnType<ResultReads['passportVersion']>>>>();
    const recorded = new Map<string, Map<string, string>>();
    for (const r of read.attempts as AttemptReadRow[]) {
      if (!own.has(r.job_ref)) continue;
      if (!attempts.has(r.attempt_id)) {
        attempts.set(r.attempt_id, {
          attempt_id: r.attempt_id,
          job_ref: r.job_ref,
          device_id: r.device_id,
          envelope_jti: r.envelope_jti,
          passport_version_id: r.passport_version_id,
          failure_reason: r.failure_reason,
        });
      }
      if (r.version_id !== null && r.content_hash !== null && r.merkle_root !== null) {
        const version = { id: r.version_id, content_hash: r.content_hash, merkle_root: r.merkle_root };
        versions.set(version.id, Promise.resolve(version));
      }
      if (named.has(r.attempt_id)) {
        const kinds = recorded.get(r.attempt_id) ?? new Map<string, string>();
        recorded.set(r.attempt_id, kinds);
        if (r.kind !== null && r.payload !== null) kinds.set(r.kind, r.payload);
      }
    }
    const keys = new Map<string, IdempotencyKeyTable>();
    for (let i = 0; i < owners.length; i++) {
      for (const row of read[`keys${i}`] as IdempotencyKeyTable[]) {
        keys.set(keyOf({ tenantId: row.tenant_id, route: row.route, key: row.key }), row);
      }
    }
    const devices = new Map<string, Promise<Awaited<ReturnType<ResultReads['device']>>>>();
    if (sealing) devices.set(principal.id, Promise.resolve((read.device as DeviceKeyRow[])[0]));
    return new BatchRecords(
      trx,
      principal.tenantId,
      new Map(jobs.map((j) => [j.job_ref, j])),
      attempts,
      recorded,
      keys,
      devices,
      versions,
      (read.serials as SerialRead | undefined) ?? [],
    );
  }

  job(tenantId: string, jobRef: string): Promise<PrintJobTable | undefined> {
    return Promise.resolve(tenantId === this.tenantId ? this.jobs.get(jobRef) : undefined);
  }

  deviceAttempts(jobRef: string, deviceId: string): Promise<string[]> {
    const own = [...this.attempts.values()].filter((a) => a.job_ref === jobRef && a.device_id === deviceId);
    return Promise.resolve(own.map((a) => a.attempt_id));
  }

  failureReason(attemptId: string): Promise<string | null | undefined> {
    return Promise.resolve(this.attempts.get(attemptId)?.failure_reason);
  }

  evidence(attemptId: string): Promise<ReadonlyMap<string, string>> {
    return Promise.resolve(this.recorded.get(attemptId) ?? new Map<string, string>());
  }

  attempt(attemptId: string): Promise<AttemptRow | undefined> {
    return Promise.resolve(this.attempts.get(attemptId));
  }

  /** Read at the start for the reporting device; another one (never asked for today) is read when asked. */
  device(id: string): ReturnType<ResultReads['device']> {
    const read = this.devices.get(id) ?? databaseReads(this.db).device(id);
    this.devices.set(id, read);
    return read;
  }

  passportVersion(id: string): ReturnType<ResultReads['passportVersion']> {
    const read = this.versions.get(id) ?? databaseReads(this.db).passportVersion(id);
    this.versions.set(id, read);
    return read;
  }

  /** The key's row as read, or as an accepted result of this batch keeps it. */
  keyRow(ref: IdempotencyKeyRef): IdempotencyKeyTable | undefined {
    return this.keys.get(keyOf(ref));
  }

  /** An accepted result's effects, for the results after it. */
  apply(
    job: PrintJobTable,
    change: ReturnType<typeof transitionOf>,
    evidence: PrintEvidenceTable,
    key: IdempotencyKeyTable,
  ): void {
    this.jobs.set(job.job_ref, job);
    const attempt = this.attempts.get(evidence.attempt_id)!;
    this.attempts.set(evidence.attempt_id, { ...attempt, ...change.attempt });
    this.recorded.get(evidence.attempt_id)!.set(evidence.kind, evidence.payload);
    this.keys.set(keyOf({ tenantId: key.tenant_id, route: key.route, key: key.key }), key);
  }

  /** Whether the key had a row when the batch read it (an expired one, if a result keeps it now). */
  hadKey(ref: IdempotencyKeyRef): boolean {
    return this.keys.has(keyOf(ref));
  }
}

/** A job's move in a batch: the row its checks first saw (the guard) and what all its results change. */
interface JobMove {
  seen: PrintJobTable;
  set: Partial<PrintJobTable>;
}

/** The writes of a batch's accepted results, collected in order and written set-wise. */
class BatchWrites {
  private readonly moves = new Map<string, JobMove>();
  private readonly attempts = new Map<string, Partial<PrintAttemptTable>>();
  private readonly evidence: PrintEvidenceTable[] = [];
  private readonly audits: AuditEntry[] = [];
  private readonly sealed: { job: PrintJobTable; input: ResultInput }[] = [];
  private readonly keys: IdempotencyKeyTable[] = [];
  /** Kept keys that had an (expired) row: it is deleted before the new one goes in. */
  private readonly expired: IdempotencyKeyRef[] = [];

  constructor(
    private readonly principal: Reporter,
    private readonly correlationId: string,
    private readonly iso: string,
  ) {}

  get empty(): boolean {
    return this.moves.size === 0;
  }

  /** Takes a checked result (`job` as its checks saw it) and answers the job after it. */
  accept(records: BatchRecords, job: PrintJobTable, item: BatchedResult): JobView {
    const { input, idempotency } = item;
    const change = transitionOf(input, this.iso);
    const after: PrintJobTable = { ...job, ...change.job, updated_at: this.iso };
    const move = this.moves.get(job.job_ref) ?? { seen: job, set: {} };
    Object.assign(move.set, change.job, { updated_at: this.iso });
    this.moves.set(job.job_ref, move);
    this.attempts.set(input.attempt_id, { ...this.attempts.get(input.attempt_id), ...change.attempt });
    const evidence = evidenceRow(this.principal, job, input, this.iso);
    this.evidence.push(evidence);
    this.audits.push(resultAudit(this.principal, job, input, this.correlationId));
    if (input.status === 'SEALED') this.sealed.push({ job, input });
    const view = jobView(after);
    const key = idempotency.rowFor(view);
    if (records.hadKey(idempotency.ref)) this.expired.push(idempotency.ref);
    this.keys.push(key);
    records.apply(after, change, evidence, key);
    return view;
  }

  /**
   * Writes everything: each job's one guarded UPDATE to its last state (one statement for jobs with the same
   * change), then the keys, the evidence, the attempts, SEALED's side effects and the audit entries, each for
   * all results at once. Throws when a job, a serial or a key is no longer as read. `alone`: `trx` is the
   * root handle, and the writes are a unit of their own (one statement when they fit it).
   */
  async flush(trx: Db, deps: ResultDeps, records: BatchRecords, alone: boolean): Promise<void> {
    // What none of the rest reads goes in one write set (one statement on PostgreSQL).
    const writes = new WriteSet();
    // SEALED's side effects first: they read and write the jobs' serials (at once), and the receipts need
    // their events (added to the set).
    const receipts: Omit<SealReceiptTable, 'leaf_index'>[] = [];
    if (this.sealed.length > 0) {
      const outcomes = this.sealed.map(({ job }) => sealOutcome(job, this.iso, this.correlationId));
      const events = await deps.port.confirmPrinted(trx, outcomes, writes, records.serials);
      receipts.push(
        ...(await Promise.all(
          this.sealed.map(async ({ job, input }, i) => {
            const attempt = await records.attempt(input.attempt_id);
            return sealReceipt(deps, job, input, attempt!.passport_version_id, events[i] ?? null, this.iso);
          }),
        )),
      );
    }
    // Jobs whose results change the same columns to the same values (in a batch, most end SEALED at the
    // same instant) move with one UPDATE, each still guarded by its own attempt and the state its checks saw.
    for (const { set, items: seen } of bySameChange([...this.moves.values()].map((m) => [m.set, m.seen]))) {
      for (let i = 0; i < seen.length; i += GUARDED_UPDATE_CHUNK) {
        const jobs = seen.slice(i, i + GUARDED_UPDATE_CHUNK);
        const guards = jobs.map((job) => ({
          job_ref: job.job_ref,
          tenant_id: this.principal.tenantId,
          attempt_id: job.attempt_id!,
          state: job.state,
        }));
        writes.add(guardedJobUpdate(trx, set, guards, this.iso), {
          rows: jobs.length,
          otherwise: 'a job of the batch moved since the batch read it',
        });
      }
    }
    for (const { insert, rows } of completedIdempotencyKeyInserts(trx, this.keys)) {
      writes.add(insert, { rows, otherwise: 'an Idempotency-Key of the batch was kept meanwhile' });
    }
    for (let i = 0; i < this.evidence.length; i += EVIDENCE_INSERT_CHUNK) {
      writes.add(insertEvidence(trx, this.evidence.slice(i, i + EVIDENCE_INSERT_CHUNK)));
    }
    // One UPDATE per distinct change: in a batch most attempts end in the same state at the same instant.
    for (const { set, items: ids } of bySameChange([...this.attempts].map(([id, set]) => [set, id]))) {
      writes.add(updateAttempts(trx, set, ids));
    }
    if (receipts.length > 0) writes.add(insertReceipts(trx, receipts));
    addAudits(writes, trx, this.audits);
    // A key that expired goes before its new answer is kept (one write set may not change a row twice), so
    // then the set shares a transaction with that DELETE.
    if (this.expired.length === 0 && alone) await writes.flushAlone(trx);
    else if (alone) await trx.transaction().execute((unit) => this.deleteExpiredThen(unit, writes));
    else await this.deleteExpiredThen(trx, writes);
  }

  private async deleteExpiredThen(trx: Db, writes: WriteSet): Promise<void> {
    if (this.expired.length > 0) {
      const now = this.keys.map((k) => k.created_at).reduce((a, b) => (a > b ? a : b));
      for (const { owner, keys } of byOwner(this.expired)) {
        await deleteExpiredIdempotencyKeys(trx, owner, keys, now);
      }
    }
    await writes.flush(trx);
  }
}

/**
 * Jobs that make the same change, each guarded by the state and attempt its checks saw and a live lease. The
 * keys as a list, the tenant inside each job's guard: with `tenant_id = ?` on its own SQLite's planner walks the
 * tenant's jobs on an index that starts with it (1.4 ms a statement with 4,000 jobs) instead of probing the
 * primary key once per job.
 */
const guardedJobUpdate = prepared(
  (
    trx: Db,
    set: Partial<PrintJobTable>,
    guards: readonly Pick<PrintJobTable, 'job_ref' | 'tenant_id' | 'attempt_id' | 'state'>[],
    iso: string,
  ) =>
    trx
      .updateTable('print_jobs')
      .set(set)
      .where(
        'job_ref',
        'in',
        guards.map((g) => g.job_ref),
      )
      .where((eb) =>
        eb.or(
          guards.map((g) =>
            eb.and([
              eb('job_ref', '=', g.job_ref),
              eb('tenant_id', '=', g.tenant_id),
              eb('attempt_id', '=', g.attempt_id),
              eb('state', '=', g.state),
            ]),
          ),
        ),
      )
      .where(liveAt(iso)),
);

const insertEvidence = prepared((trx: Db, rows: readonly PrintEvidenceTable[]) =>
  trx.insertInto('print_evidence').values(rows),
);

const updateAttempts = prepared((trx: Db, set: Partial<PrintAttemptTable>, attemptIds: readonly string[]) =>
  trx.updateTable('print_attempts').set(set).where('attempt_id', 'in', attemptIds),
);

const insertReceipts = prepared((trx: Db, rows: readonly Omit<SealReceiptTable, 'leaf_index'>[]) =>
  trx.insertInto('seal_receipts').values(rows),
);

/** Items by the change they make (equal sets of columns and values), in the order each change is first seen. */
function bySameChange<S, T>(pairs: readonly (readonly [S, T])[]): { set: S; items: T[] }[] {
  const groups = new Map<string, { set: S; items: T[] }>();
  for (const [set, item] of pairs) {
    const change = JSON.stringify(set);
    const group = groups.get(change);
    if (group) group.items.push(item);
    else groups.set(change, { set, items: [item] });
  }
  return [...groups.values()];
}

/** Jobs moved by one guarded UPDATE (three parameters each). */
const GUARDED_UPDATE_CHUNK = 200;

/** Rows per multi-row INSERT: 10 columns x 200 stays far below both dialects' parameter limits. */
const EVIDENCE_INSERT_CHUNK = 200;
