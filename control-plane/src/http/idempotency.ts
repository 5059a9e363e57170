import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalJson } from '@dpp/shared';
import type { Db, SecretBox } from '../store/index.js';
import { ApiError } from './api-error.js';
import type { IdempotencyMode, JsonReply } from './route.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A reservation older than this whose request never finished (a crash) may be taken over. */
const ABANDONED_AFTER_MS = 60_000;
/** How long a duplicate waits for its twin that is still running before answering 409. */
const WAIT_FOR_TWIN_MS = 10_000;

export interface IdempotencyOptions {
  db: Db;
  ttlHours: number;
  now: () => number;
  /** Seals stored answers at rest (SECRETS_KEY): some carry a secret shown once, such as a webhook's. */
  secrets: SecretBox;
}

/** The additional data of a stored answer: its key's tenant, route and key. */
const answerContext = (s: IdempotencyScope) =>
  `idempotency_keys.response_body:${s.tenantId}:${s.route}:${s.key}`;

export interface IdempotencyScope {
  tenantId: string;
  /** Method and route pattern, e.g. `POST /api/v2/products/{id}/void`. */
  route: string;
  key: string;
  /** SHA-256 over the concrete path and the canonical JSON body. */
  requestHash: string;
}

export function requestHash(path: string, body: unknown): string {
  return createHash('sha256')
    .update(path)
    .update('\n')
    .update(body === undefined ? '' : canonicalJson(body))
    .digest('hex');
}

/**
 * Reads the Idempotency-Key header per the route's mode: required routes refuse a call without it
 * (400 IDEMPOTENCY_KEY_REQUIRED); a present key must be a UUID (api-v2.md: `Idempotency-Key: <uuid>`).
 */
export function readIdempotencyKey(header: string | undefined, mode: IdempotencyMode): string | null {
  if (mode === 'none') return null;
  if (header === undefined || header === '') {
    if (mode === 'required') {
      throw new ApiError(
        'IDEMPOTENCY_KEY_REQUIRED',
        'This operation requires an Idempotency-Key header (a UUID)',
        {
          details: { header: IDEMPOTENCY_HEADER },
        },
      );
    }
    return null;
  }
  if (!UUID.test(header)) throw ApiError.validation(IDEMPOTENCY_HEADER, 'Idempotency-Key must be a UUID');
  return header.toLowerCase();
}

type Begin = { kind: 'proceed' } | { kind: 'replay'; reply: JsonReply };

/**
 * Runs `execute` at most once per (tenant, route, key). A repeat with the same request replays the first
 * status and body; a different request under the same key is 409; a twin that arrives while the first is
 * still running waits for it and replays, or answers 409 if it takes too long. Replies of 5xx are not
 * kept, so the caller can retry.
 */
export async function runIdempotent(
  opts: IdempotencyOptions,
  scope: IdempotencyScope,
  execute: () => Promise<JsonReply>,
): Promise<JsonReply & { replayed?: boolean }> {
  const begun = await begin(opts, scope);
  if (begun.kind === 'replay') return { ...begun.reply, replayed: true };
  let reply: JsonReply;
  try {
    reply = await execute();
  } catch (err) {
    await release(opts.db, scope);
    throw err;
  }
  if (reply.status >= 500) {
    await release(opts.db, scope);
    return reply;
  }
  await opts.db
    .updateTable('idempotency_keys')
    .set({
      state: 'completed',
      response_status: reply.status,
      response_body:
        reply.body === undefined ? null : opts.secrets.seal(JSON.stringify(reply.body), answerContext(scope)),
      response_headers: reply.headers ? JSON.stringify(reply.headers) : null,
    })
    .where('tenant_id', '=', scope.tenantId)
    .where('route', '=', scope.route)
    .where('key', '=', scope.key)
    .execute();
  return reply;
}

async function begin(opts: IdempotencyOptions, scope: IdempotencyScope): Promise<Begin> {
  const deadline = opts.now() + WAIT_FOR_TWIN_MS;
  for (;;) {
    const t = opts.now();
    const nowIso = new Date(t).toISOString();
    const inserted = await opts.db
      .insertInto('idempotency_keys')
      .values({
        tenant_id: scope.tenantId,
        route: scope.route,
        key: scope.key,
        request_hash: scope.requestHash,
        state: 'running',
        response_status: null,
        response_body: null,
        response_headers: null,
        locked_at: nowIso,
        created_at: nowIso,
        expires_at: new Date(t + opts.ttlHours * 3_600_000).toISOString(),
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'route', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) return { kind: 'proceed' };

    const row = await opts.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('tenant_id', '=', scope.tenantId)
      .where('route', '=', scope.route)
      .where('key', '=', scope.key)
      .executeTakeFirst();
    if (!row) continue; // released or expired between our insert and select: try again
    if (row.expires_at <= nowIso) {
      await opts.db
        .deleteFrom('idempotency_keys')
        .where('tenant_id', '=', scope.tenantId)
        .where('route', '=', scope.route)
        .where('key', '=', scope.key)
        .where('expires_at', '=', row.expires_at)
        .execute();
      continue;
    }
    if (row.request_hash !== scope.requestHash) {
      throw ApiError.plain(409, 'This Idempotency-Key was already used with a different request', {
        details: { reason: 'idempotency_key_reused', header: IDEMPOTENCY_HEADER },
      });
    }
    if (row.state === 'completed') {
      return {
        kind: 'replay',
        reply: {
          status: row.response_status ?? 200,
          body:
            row.response_body === null
              ? undefined
              : JSON.parse(opts.secrets.open(row.response_body, answerContext(scope))),
          headers: row.response_headers ? JSON.parse(row.response_headers) : undefined,
        },
      };
    }
    // Still running. Take over a reservation abandoned by a crash; otherwise wait for the twin.
    if (Date.parse(row.locked_at) < t - ABANDONED_AFTER_MS) {
      const taken = await opts.db
        .updateTable('idempotency_keys')
        .set({ locked_at: nowIso })
        .where('tenant_id', '=', scope.tenantId)
        .where('route', '=', scope.route)
        .where('key', '=', scope.key)
        .where('state', '=', 'running')
        .where('locked_at', '=', row.locked_at)
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) === 1) return { kind: 'proceed' };
      continue;
    }
    if (opts.now() >= deadline) {
      throw ApiError.plain(
        409,
        'A request with this Idempotency-Key is still being processed; retry shortly',
        {
          details: { reason: 'idempotency_key_in_use', header: IDEMPOTENCY_HEADER },
          headers: { 'Retry-After': '1' },
        },
      );
    }
    await sleep(25);
  }
}

async function release(db: Db, scope: IdempotencyScope): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('tenant_id', '=', scope.tenantId)
    .where('route', '=', scope.route)
    .where('key', '=', scope.key)
    .where('state', '=', 'running')
    .execute();
}

/** Deletes expired keys; run periodically by the housekeeping worker. */
export async function purgeExpiredIdempotencyKeys(db: Db, now: () => number): Promise<number> {
  const res = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', new Date(now()).toISOString())
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * For operations that claim the key inside their own transaction: the stored reply of an earlier request
 * under this key (replayed), or null to proceed. A different request under the key is 409.
 */
export async function findIdempotentReply(
  db: Db,
  claim: IdempotencyScope,
  now: () => number,
): Promise<(JsonReply & { replayed: true }) | null> {
  const row = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('tenant_id', '=', claim.tenantId)
    .where('route', '=', claim.route)
    .where('key', '=', claim.key)
    .executeTakeFirst();
  if (!row || row.expires_at <= new Date(now()).toISOString() || row.state !== 'completed') return null;
  if (row.request_hash !== claim.requestHash) {
    throw ApiError.plain(409, 'This Idempotency-Key was already used with a different request', {
      details: { reason: 'idempotency_key_reused', header: IDEMPOTENCY_HEADER },
    });
  }
  return {
    status: row.response_status ?? 200,
    body: row.response_body === null ? undefined : JSON.parse(row.response_body),
    replayed: true,
  };
}

/**
 * Stores the reply under the key in the caller's transaction. If a twin committed first, the insert
 * conflicts and the transaction fails; the caller then replays the twin's reply.
 */
export async function storeIdempotentReply(
  trx: Db,
  claim: IdempotencyScope,
  reply: JsonReply,
  ttlHours: number,
  now: () => number,
): Promise<void> {
  const t = now();
  await trx
    .insertInto('idempotency_keys')
    .values({
      tenant_id: claim.tenantId,
      route: claim.route,
      key: claim.key,
      request_hash: claim.requestHash,
      state: 'completed',
      response_status: reply.status,
      response_body: reply.body === undefined ? null : JSON.stringify(reply.body),
      response_headers: null,
      locked_at: new Date(t).toISOString(),
      created_at: new Date(t).toISOString(),
      expires_at: new Date(t + ttlHours * 3_600_000).toISOString(),
    })
    .execute();
}
