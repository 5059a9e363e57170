/**
 * The `idempotency_keys` table: one row per (owner, route, key), `running` while its request runs and
 * `completed` with the answer after. What a key means for a request (replay, 409, waiting for a twin) is
 * decided in http/idempotency.ts; this module only reads and writes the rows.
 */
import { type CompiledQuery, sql } from 'kysely';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';
import { prepared } from './prepared.js';
import type { IdempotencyKeyTable } from './schema.js';

/** Which key: its owner (a tenant, or an OAuth client before there is one), the route and the key. */
export interface IdempotencyKeyRef {
  tenantId: string;
  route: string;
  key: string;
}

/** An answer as kept under a key. `body` is stored as given (callers seal it when it may hold a secret). */
export interface StoredAnswer {
  status: number;
  body: string | null;
  headers: string | null;
}

export async function findIdempotencyKey(
  db: Db,
  ref: IdempotencyKeyRef,
): Promise<IdempotencyKeyTable | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where((eb) => eb.and(keyColumns(ref)))
    .executeTakeFirst();
}

/** Reserves the key for a request that starts now; false when a row for it is already there. */
export async function reserveIdempotencyKey(
  db: Db,
  ref: IdempotencyKeyRef,
  requestHash: string,
  at: { now: string; expiresAt: string },
): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({
      ...keyColumns(ref),
      request_hash: requestHash,
      state: 'running',
      response_status: null,
      response_body: null,
      response_headers: null,
      locked_at: at.now,
      created_at: at.now,
      expires_at: at.expiresAt,
    })
    .onConflict((oc) => oc.columns(['tenant_id', 'route', 'key']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Takes over a reservation whose request never finished; false when someone else moved it first. */
export async function takeOverIdempotencyKey(
  db: Db,
  ref: IdempotencyKeyRef,
  lockedAt: string,
  now: string,
): Promise<boolean> {
  const taken = await db
    .updateTable('idempotency_keys')
    .set({ locked_at: now })
    .where((eb) => eb.and(keyColumns(ref)))
    .where('state', '=', 'running')
    .where('locked_at', '=', lockedAt)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** Marks a reserved key completed with its answer. */
export async function completeIdempotencyKey(
  db: Db,
  ref: IdempotencyKeyRef,
  answer: StoredAnswer,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({
      state: 'completed',
      response_status: answer.status,
      response_body: answer.body,
      response_headers: answer.headers,
    })
    .where((eb) => eb.and(keyColumns(ref)))
    .execute();
}

/**
 * Keeps a completed answer under the key in the caller's transaction, for operations that claim the key
 * inside their own work. If a twin committed first, the insert conflicts and the transaction fails.
 */
export async function insertCompletedIdempotencyKey(
  trx: Db,
  ref: IdempotencyKeyRef,
  requestHash: string,
  answer: StoredAnswer,
  at: { now: string; expiresAt: string },
): Promise<void> {
  await trx
    .insertInto('idempotency_keys')
    .values({
      ...keyColumns(ref),
      request_hash: requestHash,
      state: 'completed',
      response_status: answer.status,
      response_body: answer.body,
      response_headers: answer.headers,
      locked_at: at.now,
      created_at: at.now,
      expires_at: at.expiresAt,
    })
    .execute();
}

/**
 * The rows of several keys of one owner and route, read at once (a batch of results reads all its keys
 * before it applies any).
 *
 * On PostgreSQL each key is looked up on the whole primary key: a lateral subquery per key, its `limit 1`
 * (one row at most on a primary key anyway) keeping the planner from folding it into a join. Written as
 * `key in (...)`, the planner, without statistics on a young table (a new deployment, before autovacuum's
 * first ANALYZE), took the list as a filter over every key of the tenant and route: a batch of results read
 * all the route's keys, 7 ms with 10,000 of them and growing with each; a plain lateral join was folded
 * into a hash join over the same rows.
 */
export async function findIdempotencyKeys(
  db: Db,
  owner: Omit<IdempotencyKeyRef, 'key'>,
  keys: readonly string[],
): Promise<IdempotencyKeyTable[]> {
  if (keys.length === 0) return [];
  return (await db.executeQuery(idempotencyKeysQuery(db, owner, keys))).rows;
}

/** The statement of {@link findIdempotencyKeys} (`keys` not empty), for a read set (store/read-set.ts). */
export function idempotencyKeysQuery(
  db: Db,
  owner: Omit<IdempotencyKeyRef, 'key'>,
  keys: readonly string[],
): CompiledQuery<IdempotencyKeyTable> {
  return keysOfOwner(db, owner.tenantId, owner.route, keys);
}

const keysOfOwner = prepared((db: Db, tenantId: string, route: string, keys: readonly string[]) => {
  if (isPostgres(db)) {
    return sql<IdempotencyKeyTable>`
      select k.* from unnest(${[...keys]}::text[]) as wanted(key)
      cross join lateral (
        select * from idempotency_keys
        where tenant_id = ${tenantId} and route = ${route} and key = wanted.key
        limit 1
      ) as k`.compile(db);
  }
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('route', '=', route)
    .where('key', 'in', keys);
});

/** Rows per multi-row INSERT of keys: 11 columns x 200 stays far below both dialects' parameter limits. */
const KEY_INSERT_CHUNK = 200;

const insertKeys = prepared((trx: Db, rows: readonly IdempotencyKeyTable[]) =>
  trx
    .insertInto('idempotency_keys')
    .values(rows)
    .onConflict((oc) => oc.columns(['tenant_id', 'route', 'key']).doNothing()),
);

/**
 * The INSERTs that keep several completed answers in the caller's transaction, each row as
 * {@link OperationKey.rowFor} built it, for a write set ({@link WriteSet}) with each INSERT's `rows` as its
 * expected count: a row whose key is there already (a twin came first) is not inserted, and the count
 * falls short.
 */
export function completedIdempotencyKeyInserts(trx: Db, rows: readonly IdempotencyKeyTable[]) {
  const inserts = [];
  for (let i = 0; i < rows.length; i += KEY_INSERT_CHUNK) {
    const chunk = rows.slice(i, i + KEY_INSERT_CHUNK);
    inserts.push({ insert: insertKeys(trx, chunk), rows: chunk.length });
  }
  return inserts;
}

/** Deletes the rows of these keys that expired at or before `now` (they no longer count). */
export async function deleteExpiredIdempotencyKeys(
  db: Db,
  owner: Omit<IdempotencyKeyRef, 'key'>,
  keys: readonly string[],
  now: string,
): Promise<void> {
  if (keys.length === 0) return;
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', owner.tenantId)
    .where('route', '=', owner.route)
    .where('key', 'in', keys)
    .where('expires_at', '<=', now)
    .execute();
}

/** Deletes the key's row if it expired at or before `now` (it no longer counts). */
export async function deleteExpiredIdempotencyKey(
  db: Db,
  ref: IdempotencyKeyRef,
  now: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb.and(keyColumns(ref)))
    .where('expires_at', '<=', now)
    .execute();
}

/** Deletes the key's row if it still expires at `expiresAt` (nobody renewed it in between). */
export async function deleteIdempotencyKeyExpiringAt(
  db: Db,
  ref: IdempotencyKeyRef,
  expiresAt: string,
): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb.and(keyColumns(ref)))
    .where('expires_at', '=', expiresAt)
    .execute();
}

/** Releases a reservation whose request failed, so the caller may retry with the same key. */
export async function releaseIdempotencyKey(db: Db, ref: IdempotencyKeyRef): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb.and(keyColumns(ref)))
    .where('state', '=', 'running')
    .execute();
}

/** Deletes every expired key; run periodically by the housekeeping loop. */
export async function purgeExpiredIdempotencyKeys(db: Db, now: string): Promise<number> {
  const res = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The Idempotency-Key of an operation that claims it inside its own transaction (a print result, a
 * print-status batch): the operation reads an earlier answer before it starts and keeps its own answer
 * with its work, so a retry replays instead of doing the work twice. The HTTP layer builds it.
 */
export interface OperationKey<T> {
  /** Which key it is. */
  readonly ref: IdempotencyKeyRef;
  /** The answer of an earlier request under this key, or null to proceed. */
  earlier(db: Db): Promise<T | null>;
  /** Keeps the answer in the caller's transaction; the transaction fails if a twin committed first. */
  keep(trx: Db, answer: T): Promise<void>;
  /**
   * What {@link earlier} answers when the key's row, read by the caller, is `row` (undefined: there is
   * none); for callers that read several keys at once ({@link findIdempotencyKeys}).
   */
  answerIn(row: IdempotencyKeyTable | undefined): T | null;
  /** The row {@link keep} would insert, for callers that keep several answers at once. */
  rowFor(answer: T): IdempotencyKeyTable;
}

function keyColumns(ref: IdempotencyKeyRef) {
  return { tenant_id: ref.tenantId, route: ref.route, key: ref.key };
}
