import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { ApiError, type Actor } from '../http/index.js';
import { isUniqueViolation } from '../store/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import type { Db, IngestJobTable } from '../store/index.js';
import { appendChunk, discardJob, findJobByKey, insertJob } from './jobs.js';
import { createRowReader, type IngestFormat } from './rows.js';

/** Limits of one upload (api-v2.md leaves them open). */
export const INGEST_LIMITS = {
  /** Largest upload, in bytes. */
  maxBytes: 512 * 1024 * 1024,
  /** Most rows of one upload. */
  maxRows: 1_000_000,
  /** Text per spooled chunk. */
  chunkChars: 1024 * 1024,
};

export interface UploadInput {
  tenantId: string;
  actor: Actor;
  correlationId: string;
  format: IngestFormat;
  idempotencyKey: string | null;
  body: Readable;
  registry: SchemaRegistry;
  now: () => number;
  limits?: Partial<typeof INGEST_LIMITS>;
}

export interface Accepted {
  job: IngestJobTable;
  /** A repeat of an earlier upload under the same Idempotency-Key: that job is answered. */
  replayed: boolean;
}

function checkMembers(members: ReadonlyMap<string, unknown>): void {
  if (members.has('callbackUrl')) {
    throw new ApiError(
      'CALLBACK_URL_UNSUPPORTED',
      'Ingest does not call back; poll the status URL of the 202 answer instead',
      { details: { field: 'callbackUrl' } },
    );
  }
  const [unknown] = members.keys();
  if (unknown !== undefined) {
    throw ApiError.validation(unknown, `${unknown}: is not a member of an ingest upload (only items)`);
  }
}

/**
 * Spools an upload into the store as it arrives (1 MiB of text per row of ingest_upload_chunks), reading
 * it once through the same row reader the worker uses, so a malformed document, a callbackUrl or a
 * limit breach is refused (4xx, nothing kept) before anything is accepted. Memory holds one chunk and
 * one row, whatever the size. On success the job is `queued`: from then on nothing is lost.
 */
export async function receiveUpload(db: Db, input: UploadInput): Promise<Accepted> {
  const limits = { ...INGEST_LIMITS, ...input.limits };
  const at = new Date(input.now()).toISOString();
  const job: IngestJobTable = {
    id: randomUUID(),
    tenant_id: input.tenantId,
    status: 'receiving',
    format: input.format,
    idempotency_key: null,
    content_sha256: null,
    bytes: 0,
    total_rows: 0,
    processed_rows: 0,
    created_count: 0,
    failed_count: 0,
    errors_stored: 0,
    error: null,
    actor_type: input.actor.type,
    actor_id: input.actor.id,
    correlation_id: input.correlationId,
    lease_owner: null,
    locked_until: null,
    attempts: 0,
    created_at: at,
    updated_at: at,
    started_at: null,
    finished_at: null,
  };
  await insertJob(db, job);
  try {
    const reader = createRowReader(input.format, {
      registry: input.registry,
      now: input.now,
      checkOnly: true,
    });
    const hash = createHash('sha256');
    const decoder = new StringDecoder('utf8');
    let pending = '';
    let seq = 0;
    const take = (text: string) => {
      if (text.includes('\u0000')) throw ApiError.validation('body', 'The upload contains a NUL character');
      job.total_rows += reader.push(text).length;
      checkMembers(reader.members());
      if (job.total_rows > limits.maxRows) {
        throw new ApiError('PAYLOAD_TOO_LARGE', `An upload holds at most ${limits.maxRows} rows`, {
          details: { maxRows: limits.maxRows },
        });
      }
      pending += text;
    };
    for await (const chunk of input.body as AsyncIterable<Buffer>) {
      job.bytes += chunk.length;
      if (job.bytes > limits.maxBytes) {
        throw new ApiError('PAYLOAD_TOO_LARGE', `An upload is at most ${limits.maxBytes} bytes`, {
          details: { maxBytes: limits.maxBytes },
        });
      }
      hash.update(chunk);
      take(decoder.write(chunk));
      if (pending.length >= limits.chunkChars) {
        await appendChunk(db, job.id, seq++, pending, new Date(input.now()).toISOString());
        pending = '';
      }
    }
    take(decoder.end());
    job.total_rows += reader.end().length;
    checkMembers(reader.members());
    if (job.total_rows === 0) throw ApiError.validation('body', 'The upload holds no rows');
    if (pending.length > 0)
      await appendChunk(db, job.id, seq++, pending, new Date(input.now()).toISOString());
    job.content_sha256 = hash.digest('hex');
    return await accept(db, job, input.idempotencyKey, input.now);
  } catch (err) {
    await discardJob(db, job.id);
    throw interrupted(err) ? ApiError.validation('body', 'The upload was interrupted before it ended') : err;
  }
}

/** The client closed the connection mid-upload: its mistake (or its network's), never our 5xx. */
function interrupted(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'ECONNRESET' || e?.code === 'ERR_STREAM_PREMATURE_CLOSE' || e?.message === 'aborted';
}

/** Moves the spooled job to `queued`, or answers the earlier job of the same Idempotency-Key. */
async function accept(db: Db, job: IngestJobTable, key: string | null, now: () => number): Promise<Accepted> {
  const at = new Date(now()).toISOString();
  try {
    await db
      .updateTable('ingest_jobs')
      .set({
        status: 'queued',
        idempotency_key: key,
        content_sha256: job.content_sha256,
        bytes: job.bytes,
        total_rows: job.total_rows,
        updated_at: at,
      })
      .where('id', '=', job.id)
      .execute();
  } catch (err) {
    if (!key || !isUniqueViolation(err)) throw err;
    const first = await findJobByKey(db, job.tenant_id, key);
    if (!first) throw err;
    await discardJob(db, job.id);
    if (first.content_sha256 !== job.content_sha256) {
      throw ApiError.plain(409, 'This Idempotency-Key was already used with a different upload', {
        details: { reason: 'idempotency_key_reused', header: 'Idempotency-Key', jobId: first.id },
      });
    }
    return { job: first, replayed: true };
  }
  return { job: { ...job, status: 'queued', idempotency_key: key, updated_at: at }, replayed: false };
}
