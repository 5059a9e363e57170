import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../http/index.js';
import { productBody } from '@dpp/testkit/products';
import { schemaRegistry } from '../schemas/index.js';
import { insertTenant } from '../tenants/index.js';
import { openTestStore, testDialects } from '@dpp/testkit';
import { receiveUpload } from './upload.js';

describe.each(testDialects())('receiveUpload limits (%s)', (dialect) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  let tenantId: string;
  beforeAll(async () => {
    store = await openTestStore(dialect);
    tenantId = (
      await insertTenant(store.db, {
        id: randomUUID(),
        name: 'T',
        tier: 'free',
        sandbox: false,
        sandboxExpiresAt: null,
      })
    ).id;
  });
  afterAll(() => store.drop());

  const ndjson = (n: number) =>
    Array.from({ length: n }, (_, i) => JSON.stringify(productBody(i))).join('\n');

  async function refused(body: string, limits: Record<string, number>, chunkSize = 64): Promise<ApiError> {
    const bytes = Buffer.from(body);
    const chunks = Array.from({ length: Math.ceil(bytes.length / chunkSize) }, (_, i) =>
      bytes.subarray(i * chunkSize, (i + 1) * chunkSize),
    );
    try {
      await receiveUpload(store.db, {
        tenantId,
        actor: { type: 'system', id: null },
        correlationId: 'c',
        format: 'ndjson',
        idempotencyKey: null,
        body: Readable.from(chunks),
        registry: schemaRegistry,
        now: Date.now,
        limits,
      });
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      return err as ApiError;
    }
    throw new Error('accepted');
  }

  async function kept(): Promise<number> {
    return (await store.db.selectFrom('ingest_jobs').select('id').execute()).length;
  }

  it('refuses more rows than allowed with 413 PAYLOAD_TOO_LARGE and keeps nothing', async () => {
    const err = await refused(ndjson(5), { maxRows: 3, chunkChars: 100 });
    expect(err.status).toBe(413);
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual({ maxRows: 3 });
    expect(await kept()).toBe(0);
    expect((await store.db.selectFrom('ingest_upload_chunks').select('seq').execute()).length).toBe(0);
  });

  it('refuses more bytes than allowed with 413 while reading, and keeps nothing', async () => {
    const err = await refused(ndjson(50), { maxBytes: 1000 });
    expect(err.status).toBe(413);
    expect(err.details).toEqual({ maxBytes: 1000 });
    expect(await kept()).toBe(0);
  });

  it('refuses a NUL character with 400', async () => {
    const err = await refused(`${ndjson(1)}\n\u0000`, {});
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/NUL/);
  });

  it('spools a multi-byte upload split inside characters and accepts it whole', async () => {
    const text = ndjson(3).replace(/Product/g, 'Prodüct ✓');
    const bytes = Buffer.from(text);
    const accepted = await receiveUpload(store.db, {
      tenantId,
      actor: { type: 'system', id: null },
      correlationId: 'c',
      format: 'ndjson',
      idempotencyKey: null,
      body: Readable.from(Array.from(bytes, (b) => Buffer.from([b]))),
      registry: schemaRegistry,
      now: Date.now,
      limits: { chunkChars: 50 },
    });
    expect(accepted.job).toMatchObject({ status: 'queued', total_rows: 3, bytes: bytes.length });
    const chunks = await store.db
      .selectFrom('ingest_upload_chunks')
      .select(['seq', 'data'])
      .where('job_id', '=', accepted.job.id)
      .orderBy('seq')
      .execute();
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.data).join('')).toBe(text);
  });
});
