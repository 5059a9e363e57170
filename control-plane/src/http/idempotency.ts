import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalJson } from '@dpp/shared';
import {
  type Db,
  type IdempotencyKeyRef,
  type IdempotencyKeyTable,
  type OperationKey,
  type SecretBox,
  completeIdempotencyKey,
  deleteExpiredIdempotencyKey,
  deleteIdempotencyKeyExpiringAt,
  findIdempotencyKey,
  insertCompletedIdempotencyKey,
  releaseIdempotencyKey,
  reserveIdempotencyKey,
  takeOverIdempotencyKey,
} from '../store/index.js';
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

export interface IdempotencyScope extends IdempotencyKeyRef {
  /** Method and route pattern, e.g. `POST /api/v2/products/{id}/void`. */
  route: string;
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

const keyReused = () =>
  ApiError.plain(409, 'This Idempotency-Key was already used with a different request', {
    details: { reason: 'idempotency_key_reused', header: IDEMPOTENCY_HEADER },
  });

const lifetime = (t: number, ttlHours: number) => ({
  now: new Date(t).toISOString(),
  expiresAt: new Date(t + ttlHours * 3_600_000).toISOString(),
});

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
    await releaseIdempotencyKey(opts.db, scope);
    throw err;
  }
  if (reply.status >= 500) {
    await releaseIdempotencyKey(opts.db, scope);
    return reply;
  }
  await completeIdempotencyKey(opts.db, scope, {
    status: reply.status,
    body:
      reply.body === undefined ? null : opts.secrets.seal(JSON.stringify(reply.body), answerContext(scope)),
    headers: reply.headers ? JSON.stringify(reply.headers) : null,
  });
  return reply;
}

async function begin(opts: IdempotencyOptions, scope: IdempotencyScope): Promise<Begin> {
  const deadline = opts.now() + WAIT_FOR_TWIN_MS;
  for (;;) {
    const t = opts.now();
    const nowIso = new Date(t).toISOString();
    if (await reserveIdempotencyKey(opts.db, scope, scope.requestHash, lifetime(t, opts.ttlHours))) {
      return { kind: 'proceed' };
    }
    const row = await findIdempotencyKey(opts.db, scope);
    if (!row) continue; // released or expired between our insert and select: try again
    if (row.expires_at <= nowIso) {
      await deleteIdempotencyKeyExpiringAt(opts.db, scope, row.expires_at);
      continue;
    }
    if (row.request_hash !== scope.requestHash) throw keyReused();
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
      if (await takeOverIdempotencyKey(opts.db, scope, row.locked_at, nowIso)) return { kind: 'proceed' };
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

/** How an operation's answer is written as a reply and read back from a kept one. */
export interface AnswerReply<T> {
  toReply(answer: T): JsonReply;
  fromReply(reply: JsonReply): T;
}

/**
 * The key of an operation that claims it inside its own transaction (see {@link OperationKey}). An
 * earlier answer under the key with a different request is 409; an expired one no longer counts.
 */
export function operationKey<T>(
  scope: IdempotencyScope,
  opts: { ttlHours: number; now: () => number },
  codec: AnswerReply<T>,
): OperationKey<T> {
  const answerIn = (row: IdempotencyKeyTable | undefined): T | null => {
    if (!row || row.expires_at <= new Date(opts.now()).toISOString() || row.state !== 'completed') {
      return null;
    }
    if (row.request_hash !== scope.requestHash) throw keyReused();
    return codec.fromReply({
      status: row.response_status ?? 200,
      body: row.response_body === null ? undefined : JSON.parse(row.response_body),
    });
  };
  const rowFor = (answer: T): IdempotencyKeyTable => {
    const reply = codec.toReply(answer);
    const at = lifetime(opts.now(), opts.ttlHours);
    return {
      tenant_id: scope.tenantId,
      route: scope.route,
      key: scope.key,
      request_hash: scope.requestHash,
      state: 'completed',
      response_status: reply.status,
      response_body: reply.body === undefined ? null : JSON.stringify(reply.body),
      response_headers: null,
      locked_at: at.now,
      created_at: at.now,
      expires_at: at.expiresAt,
    };
  };
  return {
    ref: { tenantId: scope.tenantId, route: scope.route, key: scope.key },
    answerIn,
    rowFor,
    async earlier(db) {
      return answerIn(await findIdempotencyKey(db, scope));
    },
    async keep(trx, answer) {
      const row = rowFor(answer);
      await deleteExpiredIdempotencyKey(trx, scope, row.created_at);
      await insertCompletedIdempotencyKey(
        trx,
        scope,
        row.request_hash,
        { status: row.response_status!, body: row.response_body, headers: null },
        { now: row.created_at, expiresAt: row.expires_at },
      );
    },
  };
}
