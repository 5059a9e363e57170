import { randomUUID } from 'node:crypto';
import {
  AIDC_ENVELOPE_TYPE,
  ATTEMPT_STATES,
  type AidcEnvelopeClaims,
  type ClaimRequest,
  type Claimed,
  LABEL_MAY_BE_OUT,
  type PassportVersionRef,
} from '@dpp/shared';
import { CompiledQuery, type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import {
  type LeaseColumns,
  claim,
  chosenClaimQuery,
  claimInTurnsQuery,
  dueChoiceQuery,
  renew,
  sortedClaims,
} from '../queue/index.js';
import type { Keyring } from '../signing/index.js';
import {
  type Database,
  type Db,
  type Dialect,
  type PrintAttemptTable,
  type PrintJobTable,
  ComposedTexts,
  prepared,
  shiftParameters,
  uuidv7,
} from '../store/index.js';
import type { AidcSettings } from './jobs.js';
import { jobEpc, jobView } from './model.js';
import { PrincipalMoved, PrintJobRefused } from './refusal.js';

export type { ClaimRequest, Claimed };

export interface ClaimDeps {
  db: Db;
  dialect: Dialect;
  keyring: Keyring;
  issuer: string;
  settings: AidcSettings;
  now: () => number;
}

/**
 * Signs the envelope of one attempt: a compact JWS (EdDSA) whose audience is the device, which names the
 * printer the attempt was claimed for, and whose expiry is the lease's. The agent verifies it against
 * /.well-known/jwks.json before printing.
 */
export async function signEnvelope(
  keyring: Keyring,
  issuer: string,
  job: PrintJobTable,
  attempt: { deviceId: string; printer: string; jti: string; passportVersion: PassportVersionRef | null },
  now: number,
): Promise<string> {
  const claims: AidcEnvelopeClaims = {
    iss: issuer,
    aud: attempt.deviceId,
    jti: attempt.jti,
    iat: Math.floor(now / 1000),
    exp: Math.floor(Date.parse(job.lease_expires_at!) / 1000),
    job_ref: job.job_ref,
    attempt_id: job.attempt_id!,
    tenant_id: job.tenant_id,
    printer: attempt.printer,
    gtin: job.gtin,
    serial: job.serial,
    digital_link: job.digital_link,
    sgtin96_epc: job.epc_scheme === 'sgtin-96' ? job.sgtin96_epc : null,
    epc: jobEpc(job),
    label_template: JSON.parse(job.label_template),
    passport_version: attempt.passportVersion,
    lease_expires_at: job.lease_expires_at!,
  };
  return keyring.signCompact(new TextEncoder().encode(JSON.stringify(claims)), AIDC_ENVELOPE_TYPE);
}

/** A passport version as an envelope names it; null when there is no such version. */
async function versionRef(db: Db, versionId: string | null): Promise<PassportVersionRef | null> {
  if (!versionId) return null;
  const v = await db
    .selectFrom('passport_versions')
    .select(['id', 'content_hash', 'merkle_root'])
    .where('id', '=', versionId)
    .executeTakeFirst();
  return v ? { id: v.id, contentHash: v.content_hash, merkleRoot: v.merkle_root } : null;
}

/**
 * Where print jobs keep their lease: the attempt_id is the fencing token, the lease is the attempt's. Jobs
 * keep their own state machine (shared/src/aidc); the queue claims and renews only.
 */
const PRINT_QUEUE: LeaseColumns<'print_jobs'> = {
  table: 'print_jobs',
  id: 'job_ref',
  owner: 'attempt_id',
  lockedUntil: 'lease_expires_at',
  attempts: 'attempt_count',
  order: ['created_at', 'job_ref'],
};

/**
 * Takes the oldest claimable job of the device's tenant that this printer can print: QUEUED, or FAILED with
 * retries left; bound to no printer or to this one; needing RFID only if the printer encodes. One guarded
 * claim (FOR UPDATE SKIP LOCKED on PostgreSQL, the single writer on SQLite), so no job is ever held by two
 * live attempts. A fresh attempt_id is the fencing token of every later result.
 */
export async function claimJob(
  deps: ClaimDeps,
  tenantId: string,
  deviceId: string,
  req: ClaimRequest,
  onlyIf?: ClaimCondition,
): Promise<Claimed | null> {
  const [claimed] = await claimJobs(deps, tenantId, deviceId, [{ ...req.printer, count: 1 }], onlyIf);
  if (!claimed) return null;
  const { printer: _printer, ...one } = claimed;
  return one;
}

/**
 * A condition a claim holds to, checked by the claim itself (in its statement on PostgreSQL, in its
 * transaction on SQLite): while it is false nothing is claimed and the claim throws {@link PrincipalMoved}.
 * A remembered principal's `stillCurrent`.
 */
export type ClaimCondition = (eb: ExpressionBuilder<Database, never>) => Expression<SqlBool>;

/** A printer of a batch claim and how many jobs it takes at most. */
export interface PrinterClaim {
  name: string;
  rfid: boolean;
  nfc?: boolean | undefined;
  count: number;
}

/**
 * Claims for several printers at once, up to `count` jobs each, printer by printer in the order given: each
 * claim is exactly {@link claimJob}'s (its own attempt, lease, fencing token and envelope), only the
 * statements are shared. A printer that finds no more work stops. Each claimed job's attempt is written with
 * the passport version it prints. On PostgreSQL all of it is one statement ({@link claimInTurns}), with no
 * transaction around it; on SQLite one transaction: the claims, then the attempts ({@link recordAttempts}).
 * With `onlyIf`, nothing is claimed unless it holds when the claim is made ({@link PrincipalMoved}).
 */
export async function claimJobs(
  deps: ClaimDeps,
  tenantId: string,
  deviceId: string,
  printers: readonly PrinterClaim[],
  onlyIf?: ClaimCondition,
): Promise<(Claimed & { printer: string })[]> {
  const t = deps.now();
  const iso = new Date(t).toISOString();
  const leaseExpiresAt = new Date(t + deps.settings.leaseSeconds * 1000).toISOString();
  const at: ClaimAt = { tenantId, deviceId, t, claimedAt: iso };
  const wanted = printers.reduce((n, p) => n + p.count, 0);
  // Named, so that a CPU profile (the aidc benchmark's) finds the claim's work after each await.
  // The label carries the passport as published now: each attempt remembers which version that is (the
  // passport's current version with what the envelope says of it; a product without one prints none).
  const claims =
    wanted === 0
      ? []
      : deps.dialect === 'postgres'
        ? await claimInTurns(deps.db, deps, at, printers, onlyIf)
        : await deps.db.transaction().execute(async function claimInTransaction(trx) {
            if (onlyIf && !(await holds(trx, onlyIf))) throw new PrincipalMoved();
            const taken = await claimForPrinters(trx, deps, at, printers);
            return taken.length === 0 ? taken : recordAttempts(trx, at, taken);
          });
  return Promise.all(
    claims.map(async (c) => ({
      job: jobView(c.row),
      attempt_id: c.attemptId,
      envelope: await signEnvelope(
        deps.keyring,
        deps.issuer,
        c.row,
        { deviceId, printer: c.printer, jti: c.jti, passportVersion: c.passportVersion ?? null },
        t,
      ),
      leaseExpiresAt,
      printer: c.printer,
    })),
  );
}

/** A condition as a statement of its own: one row, `holds`. */
function conditionQuery(db: Db, condition: ClaimCondition) {
  return db.selectNoFrom((eb) => sql<SqlBool>`${condition(eb)}`.as('holds'));
}

const compiledConditions = new WeakMap<ClaimCondition, CompiledQuery<{ holds: SqlBool }>>();

/**
 * A condition's statement (one row, `holds`), compiled once per condition: a remembered principal's condition is
 * made once per device row read (oauth/tokens.ts), so each claim and results call of that device reuses it.
 */
export function compiledCondition(db: Db, condition: ClaimCondition): CompiledQuery<{ holds: SqlBool }> {
  let compiled = compiledConditions.get(condition);
  if (!compiled) {
    compiled = conditionQuery(db, condition).compile();
    compiledConditions.set(condition, compiled);
  }
  return compiled;
}

/** Whether a claim's condition holds now, read in the claim's transaction. */
async function holds(trx: Db, condition: ClaimCondition): Promise<boolean> {
  const { rows } = await trx.executeQuery(compiledCondition(trx, condition));
  // SQLite answers 0 or 1, PostgreSQL a boolean.
  return Boolean(rows[0]!.holds);
}

/** Who claims, and when. */
interface ClaimAt {
  tenantId: string;
  deviceId: string;
  t: number;
  claimedAt: string;
}

interface TakenJob {
  row: PrintJobTable;
  printer: string;
  attemptId: string;
  jti: string;
  /** The passport version the attempt prints, once its attempt is written (undefined before). */
  passportVersion?: PassportVersionRef | null;
}

/** What a PostgreSQL claim's statement takes besides its printers: its values, and whether a condition guards it. */
interface ClaimValues {
  /** The claim's instant (ISO): the leases it may take over, `updated_at`, the attempts' `claimed_at`. */
  at: string;
  lockedUntil: string;
  tenantId: string;
  deviceId: string;
  /** A condition guards the claim (`g`, composed in front by {@link guardedBy}). */
  guarded: boolean;
}

/** A printer of a PostgreSQL claim: its name and what it can do (the flags choose the statement). */
interface PrinterTurn {
  name: string;
  rfid: boolean;
  nfc: boolean;
}

/**
 * On PostgreSQL, the claim of {@link claimInTurns} as one statement, built and compiled once per shape (the
 * printers' flags, each printer's count, guarded or not): each printer in turn takes the oldest jobs it can
 * print that no printer before it took ({@link claimInTurnsQuery}), the UPDATE gives each job its own attempt
 * (`owners[k]`: printer k's attempt ids, in order; `jtis`: every attempt's envelope id, printer by printer),
 * and the attempts are written from the rows it returns, so a job claimed by no one writes none; each takes
 * its passport's current version. Guarded, every printer's choice also holds `(select holds from g)` and one
 * row more says whether it held, `g` being the condition's CTE that {@link guardedBy} puts in front: the
 * statement then starts without its `with`. It commits without waiting for the WAL flush ({@link ASYNC_COMMIT}).
 */
const claimStatement = prepared(
  (
    db: Db,
    v: ClaimValues,
    printers: readonly PrinterTurn[],
    jtis: readonly string[],
    ...owners: (readonly string[])[]
  ) => {
    const claimUpdate = claimInTurnsQuery(db, PRINT_QUEUE, {
      at: v.at,
      lockedUntil: v.lockedUntil,
      set: () => claimedBy(v.deviceId, v.at),
      turns: printers.map((p, k) => ({
        due: (eb) =>
          v.guarded
            ? eb.and([
                printable(eb, v.tenantId, [p.name], p.rfid, p.nfc),
                sql<SqlBool>`(select holds from g)`,
              ])
            : printable(eb, v.tenantId, [p.name], p.rfid, p.nfc),
        owners: owners[k]!,
      })),
    });
    const params: unknown[] = [...claimUpdate.parameters];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    let n = 0;
    const values = printers.flatMap((p, k) =>
      owners[k]!.map((owner) => `(${param(owner)}, ${param(p.name)}, ${param(jtis[n++])})`),
    );
    const claims = `claimed as (${claimUpdate.sql}),
    attempt as (
      insert into print_attempts (attempt_id, job_ref, tenant_id, device_id, printer, number, envelope_jti,
        passport_version_id, claimed_at, state, ended_at, failure_reason)
      select c.attempt_id, c.job_ref, ${param(v.tenantId)}, ${param(v.deviceId)}, n.printer, c.attempt_count, n.jti,
        v.id, ${param(v.at)}, 'CLAIMED', null, null
      from claimed as c
      join (values ${values.join(', ')}) as n(attempt_id, printer, jti) on n.attempt_id = c.attempt_id
      left join passports as p on p.tenant_id = c.tenant_id and p.product_id = c.product_id
      left join passport_versions as v on v.id = p.current_version_id
      returning attempt_id, passport_version_id
    ),
    taken as (
      select c.*, v.id as claim_version_id, v.content_hash as claim_content_hash,
        v.merkle_root as claim_merkle_root
      from claimed as c
      join attempt as a on a.attempt_id = c.attempt_id
      left join passport_versions as v on v.id = a.passport_version_id
    )`;
    // Guarded, one row more than the claims says whether the condition held (the same snapshot as the claims).
    const text = v.guarded
      ? `${claims} select taken.*, g.holds as claim_condition from g cross join ${ASYNC_COMMIT}
      left join taken on true`
      : `with ${claims} select taken.* from taken cross join ${ASYNC_COMMIT}`;
    return CompiledQuery.raw(text, params) as CompiledQuery<ClaimedRow & { claim_condition?: boolean }>;
  },
);

/** The texts of guarded claims, per claim statement and condition (a lookup instead of a renumbering). */
const guardedTexts = new ComposedTexts();

/**
 * A guarded claim's statement ({@link claimStatement}) with its condition in front as the CTE `g`: the
 * condition's parameters come after the claim's, so only the condition's short text is renumbered, once per
 * pair of texts.
 */
function guardedBy<R>(claim: CompiledQuery<R>, condition: CompiledQuery): CompiledQuery<R> {
  const text = guardedTexts.text(
    [claim.sql, condition.sql],
    '',
    () => `with g as (${shiftParameters(condition.sql, claim.parameters.length)}), ${claim.sql}`,
  );
  return CompiledQuery.raw(text, [...claim.parameters, ...condition.parameters]) as CompiledQuery<R>;
}

/**
 * On PostgreSQL, a claim's statement commits without waiting for its WAL to reach the disk
 * (`synchronous_commit` off for that statement's own transaction, `set_config(..., true)`: the connection's
 * next transaction commits as configured again). A claim only grants a lease; nothing a client sent is
 * accepted by it. PostgreSQL writes its WAL in order and a commit that waits for the flush waits for
 * everything before it, so a claim that a crash of the database loses leaves no trace that anything else
 * kept: the job is queued again (attempt count and all, as if never claimed) and its attempt is unknown, and
 * every later step of the attempt commits durably (the send gate's heartbeat, before any byte goes to a
 * printer, and every result), answered only after the claim's WAL is on disk too. A device whose claim was
 * lost is refused at the send gate (its attempt unknown: 404 to that device) and prints nothing
 * (test/aidc/claim-commit.test.ts). SQLite's commits are the same already (`synchronous = NORMAL` in WAL
 * mode: no fsync per commit). Measured on a flat-out floor: the claim's statement waited on the WAL flush
 * (`IO:WALSync`) behind the results' commits; its p50 went from 10.0-10.4 ms to 7.8-9.0 ms
 * (docs/benchmarks.md, round 24).
 */
const ASYNC_COMMIT = `(select set_config('synchronous_commit', 'off', true)) as async_commit`;

/** A row {@link claimStatement} returns: the claimed job and what the envelope says of its attempt's version. */
type ClaimedRow = PrintJobTable & {
  claim_version_id: string | null;
  claim_content_hash: string | null;
  claim_merkle_root: string | null;
};

/** The current passport version of each of these products of the tenant (a claim's envelopes name it). */
const currentVersions = prepared((trx: Db, tenantId: string, productIds: readonly string[]) =>
  trx
    .selectFrom('passports as p')
    .innerJoin('passport_versions as v', 'v.id', 'p.current_version_id')
    .select(['p.product_id', 'v.id', 'v.content_hash', 'v.merkle_root'])
    .where('p.tenant_id', '=', tenantId)
    .where('p.product_id', 'in', productIds),
);

const insertAttempts = prepared((trx: Db, rows: readonly PrintAttemptTable[]) =>
  trx.insertInto('print_attempts').values(rows),
);

/**
 * On SQLite, writes the attempt of each claimed job with the passport version it prints (its product's
 * current one), and returns each with that version as the envelope names it: the read, then the INSERT.
 */
async function recordAttempts(trx: Db, at: ClaimAt, taken: readonly TakenJob[]): Promise<TakenJob[]> {
  const { tenantId, deviceId, claimedAt } = at;
  const products = [...new Set(taken.map((c) => c.row.product_id))];
  const { rows: current } = await trx.executeQuery(currentVersions(trx, tenantId, products));
  const versions = new Map<string, PassportVersionRef>(
    current.map((v) => [v.product_id, { id: v.id, contentHash: v.content_hash, merkleRoot: v.merkle_root }]),
  );
  const claims = taken.map((c) => ({ ...c, passportVersion: versions.get(c.row.product_id) ?? null }));
  await trx.executeQuery(
    insertAttempts(
      trx,
      claims.map((c) => ({
        attempt_id: c.attemptId,
        job_ref: c.row.job_ref,
        tenant_id: tenantId,
        device_id: deviceId,
        printer: c.printer,
        number: c.row.attempt_count,
        envelope_jti: c.jti,
        passport_version_id: c.passportVersion?.id ?? null,
        claimed_at: claimedAt,
        state: 'CLAIMED',
        ended_at: null,
        failure_reason: null,
      })),
    ),
  );
  return claims;
}

/**
 * On SQLite, the claims of {@link claimJobs}, as if each printer in turn claimed its jobs one by one
 * ({@link claimNext}), in two statements when the queue allows: the oldest due jobs any of the printers can
 * print, as many as they ask for in all, are chosen at once; each printer in turn
 * takes from them, oldest first, those it can print; then one UPDATE claims them, each for its own attempt.
 * When the choice was cut at its limit, a printer left short may have jobs further down the queue: it then
 * claims them one by one as before, so every printer gets exactly what claiming in turn would give it.
 */
async function claimForPrinters(
  trx: Db,
  deps: ClaimDeps,
  at: ClaimAt,
  printers: readonly PrinterClaim[],
): Promise<TakenJob[]> {
  const { tenantId, t } = at;
  const wanted = printers.reduce((n, p) => n + p.count, 0);
  if (wanted === 1) {
    const printer = printers.find((p) => p.count === 1)!;
    return claimNext(trx, deps, at, printer);
  }
  const names = printers.map((p) => p.name);
  const rfid = printers.some((p) => p.rfid === true);
  const nfc = printers.some((p) => p.nfc === true);
  const { rows: chosen } = await trx.executeQuery(
    choosePrintable(trx, new Date(t).toISOString(), wanted, tenantId, names, rfid, nfc),
  );
  const free = new Set(chosen.map((c) => c.job_ref as string));
  const plan = printers.map((printer) => {
    const jobs: string[] = [];
    for (const c of chosen) {
      if (jobs.length === printer.count) break;
      const ref = c.job_ref as string;
      if (free.has(ref) && canPrint(printer, c)) {
        jobs.push(ref);
        free.delete(ref);
      }
    }
    return { printer, jobs: jobs.map((ref) => ({ ref, attemptId: uuidv7(), jti: randomUUID() })) };
  });
  const owners = new Map(plan.flatMap((p) => p.jobs.map((j) => [j.ref, j.attemptId] as const)));
  const claimed =
    owners.size === 0 ? [] : await claimChosenJobs(trx, deps, at, owners, { tenantId, names, rfid, nfc });
  const rows = new Map(claimed.map((row) => [row.attempt_id!, row]));
  const cut = chosen.length === wanted;
  const taken: TakenJob[] = [];
  for (const { printer, jobs } of plan) {
    let short = printer.count;
    for (const { attemptId, jti } of jobs) {
      const row = rows.get(attemptId);
      if (!row) continue;
      taken.push({ row, printer: printer.name, attemptId, jti });
      short -= 1;
    }
    // Short of its count: the rest of the queue may hold jobs only this printer can print.
    while (cut && short > 0) {
      const [next] = await claimNext(trx, deps, at, printer);
      if (!next) break;
      taken.push(next);
      short -= 1;
    }
  }
  return taken;
}

/**
 * On PostgreSQL, the claims of {@link claimJobs} in one statement ({@link claimStatement}), printer by printer,
 * each for its own attempt, written with the claim. With `onlyIf`, nothing is claimed unless it holds
 * ({@link PrincipalMoved}). Returns them printer by printer, oldest first.
 */
async function claimInTurns(
  db: Db,
  deps: ClaimDeps,
  at: ClaimAt,
  printers: readonly PrinterClaim[],
  onlyIf?: ClaimCondition,
): Promise<TakenJob[]> {
  const { tenantId, deviceId, t, claimedAt } = at;
  const turns = printers.map((printer) =>
    Array.from({ length: printer.count }, () => ({
      attemptId: uuidv7(),
      printer: printer.name,
      jti: randomUUID(),
    })),
  );
  const attempts = turns.flat();
  const claim = claimStatement(
    db,
    {
      at: claimedAt,
      lockedUntil: new Date(t + deps.settings.leaseSeconds * 1000).toISOString(),
      tenantId,
      deviceId,
      guarded: onlyIf !== undefined,
    },
    printers.map((p) => ({ name: p.name, rfid: p.rfid === true, nfc: p.nfc === true })),
    attempts.map((a) => a.jti),
    ...turns.map((turn) => turn.map((a) => a.attemptId)),
  );
  const result = await db.executeQuery(onlyIf ? guardedBy(claim, compiledCondition(db, onlyIf)) : claim);
  if (onlyIf && !result.rows[0]?.claim_condition) throw new PrincipalMoved();
  const byId = new Map(attempts.map((a) => [a.attemptId, a]));
  const claimed = new Map(
    result.rows
      .filter((r) => r.attempt_id !== null)
      .map(({ claim_version_id, claim_content_hash, claim_merkle_root, claim_condition: _, ...row }) => [
        row.attempt_id!,
        {
          ...byId.get(row.attempt_id!)!,
          row,
          passportVersion:
            claim_version_id === null
              ? null
              : { id: claim_version_id, contentHash: claim_content_hash!, merkleRoot: claim_merkle_root! },
        },
      ]),
  );
  return attempts.flatMap((a) => claimed.get(a.attemptId) ?? []);
}

/** Whether a chosen job is one this printer may print (as {@link printableBy} says for it alone). */
function canPrint(printer: PrinterClaim, job: Record<string, unknown>): boolean {
  return (
    (job.printer === null || job.printer === printer.name) &&
    (printer.rfid === true || Number(job.requires_rfid) === 0) &&
    (printer.nfc === true || Number(job.requires_nfc) === 0)
  );
}

/**
 * Claimable jobs of the tenant that at least one of these printers can print: QUEUED, or FAILED with
 * attempts left; for no printer or one of theirs; needing RFID or NFC only where one of them has it.
 */
function printableBy(
  eb: ExpressionBuilder<Database, 'print_jobs'>,
  tenantId: string,
  printers: readonly Pick<PrinterClaim, 'name' | 'rfid' | 'nfc'>[],
) {
  return printable(
    eb,
    tenantId,
    printers.map((p) => p.name),
    printers.some((p) => p.rfid === true),
    printers.some((p) => p.nfc === true),
  );
}

/** {@link printableBy} for printers by name, `rfid` and `nfc` when any of them has it. */
function printable(
  eb: ExpressionBuilder<Database, 'print_jobs'>,
  tenantId: string,
  names: readonly string[],
  rfid: boolean,
  nfc: boolean,
) {
  return eb.and([
    eb('tenant_id', '=', tenantId),
    // The partial index print_jobs_claim_order's condition, spelled with literals: a planner can only
    // see that a condition with bound parameters implies the index's if it knows the values.
    sql<SqlBool>`state in ('QUEUED', 'FAILED')`,
    eb.or([
      eb('state', '=', 'QUEUED'),
      eb.and([eb('state', '=', 'FAILED'), eb('attempt_count', '<', eb.ref('max_attempts'))]),
    ]),
    eb.or([eb('printer', 'is', null), eb('printer', 'in', names)]),
    ...(rfid ? [] : [eb('requires_rfid', '=', 0)]),
    ...(nfc ? [] : [eb('requires_nfc', '=', 0)]),
  ]);
}

/** On SQLite, claims the chosen jobs (`owners`: job to attempt) in one prepared UPDATE; the rows in queue order. */
async function claimChosenJobs(
  trx: Db,
  deps: ClaimDeps,
  at: ClaimAt,
  owners: ReadonlyMap<string, string>,
  by: { tenantId: string; names: readonly string[]; rfid: boolean; nfc: boolean },
): Promise<PrintJobTable[]> {
  const claim = claimPrintable(
    trx,
    new Date(at.t).toISOString(),
    new Date(at.t + deps.settings.leaseSeconds * 1000).toISOString(),
    [...owners.keys()],
    [...owners.values()],
    by.tenantId,
    by.names,
    by.rfid,
    by.nfc,
    at.deviceId,
  );
  return sortedClaims(PRINT_QUEUE, (await trx.executeQuery(claim)).rows);
}

/** On SQLite, the oldest due jobs any of these printers can print ({@link claimForPrinters}' choice). */
const choosePrintable = prepared(
  (
    trx: Db,
    at: string,
    limit: number,
    tenantId: string,
    names: readonly string[],
    rfid: boolean,
    nfc: boolean,
  ) =>
    dueChoiceQuery(trx, PRINT_QUEUE, {
      at,
      limit,
      due: (eb) => printable(eb, tenantId, names, rfid, nfc),
      columns: ['printer', 'requires_rfid', 'requires_nfc'],
    }),
);

/** On SQLite, the claim of the chosen jobs, `ids[i]` for the attempt `attempts[i]` ({@link claimForPrinters}). */
const claimPrintable = prepared(
  (
    trx: Db,
    at: string,
    lockedUntil: string,
    ids: readonly string[],
    attempts: readonly string[],
    tenantId: string,
    names: readonly string[],
    rfid: boolean,
    nfc: boolean,
    deviceId: string,
  ) =>
    chosenClaimQuery(trx, PRINT_QUEUE, {
      at,
      lockedUntil,
      ids,
      owners: attempts,
      due: (eb) => printable(eb, tenantId, names, rfid, nfc),
      set: () => claimedBy(deviceId, at),
    }),
);

/** What a claim sets on the job besides its lease, attempt and count. */
function claimedBy(deviceId: string, updatedAt: string) {
  return { state: 'CLAIMED', device_id: deviceId, sending_at: null, updated_at: updatedAt };
}

/** On SQLite, claims the oldest job this printer can print (see {@link claimJob}) for a new attempt. */
async function claimNext(
  trx: Db,
  deps: ClaimDeps,
  at: ClaimAt,
  printer: ClaimRequest['printer'],
): Promise<TakenJob[]> {
  const { tenantId, deviceId, t } = at;
  const attempt = { attemptId: uuidv7(), printer: printer.name, jti: randomUUID() };
  const [row] = await claim(trx, PRINT_QUEUE, {
    now: t,
    leaseMs: deps.settings.leaseSeconds * 1000,
    owner: attempt.attemptId,
    due: (eb) => printableBy(eb, tenantId, [printer]),
    set: () => claimedBy(deviceId, new Date(t).toISOString()),
  });
  return row ? [{ row, ...attempt }] : [];
}

/**
 * Where the label of the current attempt may have left the printer: its device said it was sending it (the
 * send gate, `sending_at`) or reported SPOOL_SUBMITTED or later. Such an attempt is never reaped into a
 * re-print; it keeps its lease whenever its device comes back.
 */
export const labelMayBeOut = (eb: ExpressionBuilder<Database, 'print_jobs'>) =>
  eb.or([eb('sending_at', 'is not', null), eb('state', 'in', LABEL_MAY_BE_OUT)]);

/**
 * Extends the lease of the current attempt while the job is in progress, and returns a fresh envelope
 * with the new expiry. A superseded attempt is 409 STALE_ATTEMPT; an expired lease is 410 ENVELOPE_EXPIRED,
 * unless the label may already be out: that attempt is renewed whenever its device comes back.
 *
 * `sending` is the send gate: the device is about to send the label. It is granted only on a live lease,
 * and from then on the job is one whose label may be out ({@link labelMayBeOut}), so no lapse of the
 * lease between the bytes going out and SPOOL_SUBMITTED arriving can make the system print it twice.
 */
export async function heartbeat(
  deps: ClaimDeps,
  tenantId: string,
  deviceId: string,
  jobRef: string,
  attemptId: string,
  sending = false,
): Promise<{ leaseExpiresAt: string; envelope: string }> {
  const t = deps.now();
  const iso = new Date(t).toISOString();
  const leaseExpiresAt = new Date(t + deps.settings.leaseSeconds * 1000).toISOString();
  const row = await renew(
    deps.db,
    PRINT_QUEUE,
    { id: jobRef, owner: attemptId },
    {
      now: t,
      leaseMs: deps.settings.leaseSeconds * 1000,
      set: (eb) => ({
        updated_at: iso,
        ...(sending ? { sending_at: eb.fn.coalesce('sending_at', eb.val(iso)) } : {}),
      }),
      where: (eb) => {
        const live = eb('lease_expires_at', '>', iso);
        // Once the label may be out, the attempt stays the device's after its lease ran out (the device was
        // cut off, or the control plane was down): it may take the lease again and finish the job. Opening
        // the send gate itself needs a live lease.
        return eb.and([
          eb('tenant_id', '=', tenantId),
          eb('device_id', '=', deviceId),
          eb('state', 'in', ATTEMPT_STATES),
          sending ? live : eb.or([live, labelMayBeOut(eb)]),
        ]);
      },
    },
  );
  if (!row) throw await explainRefusal(refusalReads(deps.db), tenantId, jobRef, attemptId, iso, { deviceId });
  const attempt = await deps.db
    .selectFrom('print_attempts')
    .select(['printer', 'passport_version_id'])
    .where('attempt_id', '=', attemptId)
    .executeTakeFirstOrThrow();
  const envelope = await signEnvelope(
    deps.keyring,
    deps.issuer,
    row,
    {
      deviceId,
      printer: attempt.printer,
      jti: randomUUID(),
      passportVersion: await versionRef(deps.db, attempt.passport_version_id),
    },
    t,
  );
  return { leaseExpiresAt, envelope };
}

/**
 * What {@link explainRefusal} reads: the job, the attempts a device made at it, and an attempt's failure
 * reason. From the database ({@link refusalReads}), or, for a batch of results, from the rows it read at once.
 */
export interface RefusalReads {
  job(tenantId: string, jobRef: string): Promise<PrintJobTable | undefined>;
  deviceAttempts(jobRef: string, deviceId: string): Promise<string[]>;
  /** undefined when there is no such attempt. */
  failureReason(attemptId: string): Promise<string | null | undefined>;
}

export function refusalReads(db: Db): RefusalReads {
  return {
    job: (tenantId, jobRef) =>
      db
        .selectFrom('print_jobs')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('job_ref', '=', jobRef)
        .executeTakeFirst(),
    deviceAttempts: async (jobRef, deviceId) => {
      const own = await db
        .selectFrom('print_attempts')
        .select('attempt_id')
        .where('job_ref', '=', jobRef)
        .where('device_id', '=', deviceId)
        .execute();
      return own.map((a) => a.attempt_id);
    },
    failureReason: async (attemptId) => {
      const attempt = await db
        .selectFrom('print_attempts')
        .select(['failure_reason'])
        .where('attempt_id', '=', attemptId)
        .executeTakeFirst();
      return attempt?.failure_reason;
    },
  };
}

/**
 * Why a guarded statement on a job matched nothing: no such job, a stale attempt, an expired lease or a wrong
 * state. Asked for a device (`deviceId`), the answer tells it nothing about other devices' work: a job it
 * never attempted is not found, an attempt that is not its own is forbidden, and a superseded attempt names
 * the current one only when that one is the device's too.
 */
export async function explainRefusal(
  reads: RefusalReads,
  tenantId: string,
  jobRef: string,
  attemptId: string,
  nowIso: string,
  opts: { to?: string; deviceId?: string } = {},
): Promise<PrintJobRefused> {
  const { to, deviceId } = opts;
  const job = await reads.job(tenantId, jobRef);
  if (!job) return new PrintJobRefused('job_not_found', 'Print job not found');
  if (deviceId !== undefined) {
    const own = await reads.deviceAttempts(jobRef, deviceId);
    if (own.length === 0) return new PrintJobRefused('job_not_found', 'Print job not found');
    if (!own.includes(attemptId))
      return new PrintJobRefused('not_permitted', "This attempt is not one of this device's", {
        jobRef,
        attemptId,
      });
  }
  if (job.attempt_id !== attemptId) {
    const currentIsVisible = deviceId === undefined || job.device_id === deviceId;
    return new PrintJobRefused('stale_attempt', 'This attempt was superseded by a newer claim of the job', {
      jobRef,
      attemptId,
      ...(currentIsVisible ? { currentAttemptId: job.attempt_id } : {}),
    });
  }
  if (
    (job.lease_expires_at && job.lease_expires_at <= nowIso) ||
    (await reads.failureReason(attemptId)) === 'lease_expired'
  ) {
    return new PrintJobRefused(
      'lease_expired',
      'The lease of this attempt, and so its envelope, has expired',
      {
        jobRef,
        attemptId,
        leaseExpiredAt: job.lease_expires_at,
      },
    );
  }
  return new PrintJobRefused(
    'invalid_transition',
    `A ${job.state} job cannot move to ${to ?? 'that state'}`,
    {
      jobRef,
      from: job.state,
      ...(to ? { to } : {}),
    },
  );
}
