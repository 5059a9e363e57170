import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ELECTRONICS_EXTENSIONS, gtinFor, productBody } from '@dpp/testkit/products';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { commitProgress } from './jobs.js';

const TERMINAL = new Set(['completed', 'failed']);

describe.each(testDialects())('POST /api/v2/ingest/products (%s)', (dialect) => {
  let t: TestControlPlane;
  let header: string[];
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    const template = await t.call('GET', '/api/v2/schemas/categories/electronics/import-template', {
      key: t.tenants.a.readOnly,
    });
    header = template.text.trim().split(',');
  });
  afterAll(() => t.close());

  const upload = (
    body: string,
    contentType: string,
    opts: { key?: string; query?: string; headers?: Record<string, string> } = {},
  ) =>
    t.call('POST', `/api/v2/ingest/products${opts.query ?? ''}`, {
      key: opts.key ?? t.tenants.a.admin,
      body,
      headers: { 'content-type': contentType, ...opts.headers },
    });

  async function finished(statusUrl: string, key = t.tenants.a.admin) {
    for (let i = 0; i < 600; i++) {
      const r = await t.call('GET', statusUrl, { key });
      expect(r.status).toBe(200);
      if (TERMINAL.has(r.body.data.status)) return r.body.data;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('ingest did not finish');
  }

  async function jobCount(): Promise<{ jobs: number; chunks: number }> {
    const jobs = await t.cp.store.db.selectFrom('ingest_jobs').select('id').execute();
    const chunks = await t.cp.store.db.selectFrom('ingest_upload_chunks').select('job_id').execute();
    return { jobs: jobs.length, chunks: chunks.length };
  }

  /** A CSV row in the template's column order. */
  function csvRow(cells: Record<string, string>): string {
    return header.map((c) => cells[c] ?? '').join(',');
  }
  const goodCells = (i: number): Record<string, string> => ({
    name: `Imported ${i}`,
    description: `Imported product number ${i}`,
    category: 'electronics',
    gtin: gtinFor(100_000 + i).slice(1),
    serialNumber: String(i),
    energyEfficiencyClass: 'C',
    annualEnergyConsumptionKwh: String(50 + (i % 100)),
    repairabilityScore: '6.5',
    weeeCategory: 'small_equipment',
  });

  it('imports a few thousand CSV rows: 202 with a status URL, progress, per-row errors and the created ids', async () => {
    const rows: string[] = [];
    const bad = new Map<number, string>();
    /** Rows made bad on purpose: row -> the cells it changes and the code it must fail with. */
    const broken: Record<number, [Record<string, string>, string]> = {
      5: [{ gtin: '4006381333932' }, 'VALIDATION_ERROR'],
      10: [{ gtin: goodCells(9).gtin! }, 'DUPLICATE_GTIN'],
      700: [{ repairabilityScore: '12' }, 'VALIDATION_ERROR'],
      701: [{ annualEnergyConsumptionKwh: 'lots' }, 'VALIDATION_ERROR'],
      1500: [{ category: 'toys' }, 'SCHEMA_NOT_FOUND'],
      2222: [
        {
          energyEfficiencyClass: '',
          annualEnergyConsumptionKwh: '',
          repairabilityScore: '',
          weeeCategory: '',
        },
        'EXTENSIONS_REQUIRED',
      ],
      2999: [{ description: 'short' }, 'VALIDATION_ERROR'],
    };
    for (let i = 1; i <= 3000; i++) {
      const change = broken[i];
      const cells = { ...goodCells(i), ...change?.[0] };
      if (change) bad.set(i, change[1]);
      if (i === 3) cells.description = '"Quoted, with a comma\r\nand a line break"';
      if (i === 4) cells.hazardousSubstances = 'lead|cadmium';
      rows.push(i === 1234 ? 'only,three,fields' : csvRow(cells));
    }
    bad.set(1234, 'VALIDATION_ERROR');
    const csv = `${header.join(',')}\r\n${rows.join('\r\n')}\r\n`;
    const r = await upload(csv, 'text/csv', { headers: { 'X-Correlation-Id': 'ingest-1' } });
    expect(r.status).toBe(202);
    const statusUrl = r.body.data.statusUrl as string;
    expect(statusUrl).toBe(`/api/v2/ingest/products/${r.body.data.id}`);
    expect(r.headers.get('location')).toBe(statusUrl);
    expect(r.body.data).toMatchObject({ status: 'queued', format: 'csv', totalRows: 3000 });

    const job = await finished(statusUrl);
    expect(job).toMatchObject({
      status: 'completed',
      totalRows: 3000,
      processedRows: 3000,
      createdRows: 3000 - bad.size,
      failedRows: bad.size,
      progress: 1,
      errorsTruncated: false,
    });
    expect(job.errors.map((e: { row: number; code: string }) => [e.row, e.code])).toEqual(
      [...bad.entries()].sort((a, b) => a[0] - b[0]),
    );
    expect(job.errors.find((e: { row: number }) => e.row === 700)).toMatchObject({
      field: 'extensions.repairabilityScore',
      message: expect.stringContaining('at most 10'),
    });
    expect(job.errors.find((e: { row: number }) => e.row === 1234).message).toMatch(/3 fields/);

    const created: { row: number; productId: string }[] = [];
    let cursor = '';
    for (let page = 0; page < 40; page++) {
      const p = await t.call('GET', `${statusUrl}/created?limit=100${cursor}`, { key: t.tenants.a.readOnly });
      created.push(...p.body.data);
      if (!p.body.hasMore) break;
      cursor = `&cursor=${p.body.nextCursor}`;
    }
    expect(created).toHaveLength(3000 - bad.size);
    expect(created.map((c) => c.row)).toEqual(
      [...Array(3000).keys()].map((i) => i + 1).filter((i) => !bad.has(i)),
    );
    const errorsPage = await t.call('GET', `${statusUrl}/errors?limit=2`, { key: t.tenants.a.readOnly });
    expect(errorsPage.body.data.map((e: { row: number }) => e.row)).toEqual([5, 10]);

    const quoted = await t.call('GET', `/api/v2/products/${created.find((c) => c.row === 3)!.productId}`, {
      key: t.tenants.a.admin,
    });
    expect(quoted.body.data.productDescription).toBe('Quoted, with a comma\r\nand a line break');
    expect(quoted.body.data.extensions).toEqual({
      energyEfficiencyClass: 'C',
      annualEnergyConsumptionKwh: 53,
      repairabilityScore: 6.5,
      weeeCategory: 'small_equipment',
    });
    const arrays = await t.call('GET', `/api/v2/products/${created.find((c) => c.row === 4)!.productId}`, {
      key: t.tenants.a.admin,
    });
    expect(arrays.body.data.extensions.hazardousSubstances).toEqual(['lead', 'cadmium']);
    const events = await t.call('GET', `/api/v2/products/${created[0]!.productId}/events`, {
      key: t.tenants.a.admin,
    });
    expect(events.body.data).toMatchObject([{ type: 'product.created', correlationId: 'ingest-1' }]);
    expect((await jobCount()).chunks).toBe(0);
  });

  it('imports a JSON array, a JSON { items } object and NDJSON with the create contract per row', async () => {
    const arr = [productBody(200_001), productBody(200_002, { description: 'short' }), 'not an object'];
    const a = await finished((await upload(JSON.stringify(arr), 'application/json')).body.data.statusUrl);
    expect(a).toMatchObject({ status: 'completed', format: 'json', createdRows: 1, failedRows: 2 });
    expect(a.errors.map((e: { row: number; code: string }) => [e.row, e.code])).toEqual([
      [2, 'VALIDATION_ERROR'],
      [3, 'VALIDATION_ERROR'],
    ]);
    const o = await upload(
      JSON.stringify({ items: [productBody(200_003), productBody(200_004)] }),
      'application/json',
    );
    expect(o.status).toBe(202);
    expect(await finished(o.body.data.statusUrl)).toMatchObject({ createdRows: 2, failedRows: 0 });
    const nd = [
      JSON.stringify(productBody(200_005)),
      '{not json',
      '',
      JSON.stringify(productBody(200_006)),
    ].join('\n');
    const n = await finished((await upload(nd, 'application/x-ndjson')).body.data.statusUrl);
    expect(n).toMatchObject({ format: 'ndjson', totalRows: 3, createdRows: 2, failedRows: 1 });
    expect(n.errors[0]).toMatchObject({ row: 2, code: 'VALIDATION_ERROR' });
    const forced = await upload(JSON.stringify([productBody(200_007)]), 'text/plain', {
      query: '?format=json',
    });
    expect(forced.status).toBe(202);
    expect(await finished(forced.body.data.statusUrl)).toMatchObject({ format: 'json', createdRows: 1 });
  });

  it('refuses a callbackUrl with 400 CALLBACK_URL_UNSUPPORTED, in the query or in the JSON body, keeping nothing', async () => {
    const before = await jobCount();
    const q = await upload(JSON.stringify([productBody(300_001)]), 'application/json', {
      query: '?callbackUrl=https%3A%2F%2Fexample.test%2Fdone',
    });
    expect(q.status).toBe(400);
    expect(q.body.error.code).toBe('CALLBACK_URL_UNSUPPORTED');
    const b = await upload(
      JSON.stringify({ items: [productBody(300_002)], callbackUrl: 'https://example.test/done' }),
      'application/json',
    );
    expect(b.status).toBe(400);
    expect(b.body.error.code).toBe('CALLBACK_URL_UNSUPPORTED');
    expect(await jobCount()).toEqual(before);
  });

  it.each([
    [
      'an unterminated quote',
      'text/csv',
      () => `${header.join(',')}\n"never closed,x\n`,
      400,
      /never closed/,
    ],
    ['an unknown column', 'text/csv', () => `${header.join(',')},colour\n`, 400, /colour/],
    ['a missing required column', 'text/csv', () => 'name,description\nA,Long enough text\n', 400, /gtin/],
    ['an empty CSV', 'text/csv', () => '', 400, /empty/],
    ['a header without rows', 'text/csv', () => `${header.join(',')}\r\n`, 400, /no rows/],
    ['broken JSON', 'application/json', () => '[{"name": "x"', 400, /ends too early/],
    [
      'a JSON object with another member',
      'application/json',
      () => '{"items":[{}],"dryRun":true}',
      400,
      /dryRun/,
    ],
    ['a plain-text body', 'text/plain', () => 'hello', 415, /text\/csv/],
    ['a Latin-1 CSV', 'text/csv; charset=iso-8859-1', () => 'x', 415, /UTF-8/],
  ])('refuses %s with a 4xx and keeps nothing', async (_name, type, body, status, message) => {
    const before = await jobCount();
    const r = await upload(body(), type);
    expect(r.status).toBe(status);
    expect(r.body.error.message).toMatch(message);
    expect(await jobCount()).toEqual(before);
  });

  it('answers the first job again for the same Idempotency-Key and bytes, 409 for other bytes', async () => {
    const key = randomUUID();
    const body = JSON.stringify([productBody(400_001)]);
    const a = await upload(body, 'application/json', { headers: { 'Idempotency-Key': key } });
    const b = await upload(body, 'application/json', { headers: { 'Idempotency-Key': key } });
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(b.body.data.id).toBe(a.body.data.id);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const c = await upload(JSON.stringify([productBody(400_002)]), 'application/json', {
      headers: { 'Idempotency-Key': key },
    });
    expect(c.status).toBe(409);
    expect(c.body.error.details.reason).toBe('idempotency_key_reused');
    expect((await upload(body, 'application/json', { headers: { 'Idempotency-Key': 'nope' } })).status).toBe(
      400,
    );
    expect((await finished(a.body.data.statusUrl)).createdRows).toBe(1);
  });

  it('needs products:create to upload; the status is readable with products:read, and only by its workspace', async () => {
    const denied = await upload(JSON.stringify([productBody(500_001)]), 'application/json', {
      key: t.tenants.a.readOnly,
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.required).toBe('products:create');
    const r = await upload(JSON.stringify([productBody(500_002)]), 'application/json');
    await finished(r.body.data.statusUrl, t.tenants.a.readOnly);
    const other = await t.call('GET', r.body.data.statusUrl, { key: t.tenants.b.admin });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBeUndefined();
    expect((await t.call('GET', `${r.body.data.statusUrl}/created`, { key: t.tenants.b.admin })).status).toBe(
      404,
    );
    expect(
      (await t.call('GET', `/api/v2/ingest/products/${randomUUID()}`, { key: t.tenants.a.admin })).status,
    ).toBe(404);
    expect((await t.call('GET', '/api/v2/ingest/products/123', { key: t.tenants.a.admin })).status).toBe(400);
  });

  it('checks each row with the same rules as POST /products (duplicates against stored products too)', async () => {
    const stored = await t.call('POST', '/api/v2/products', {
      key: t.tenants.a.admin,
      body: productBody(600_001),
    });
    expect(stored.status).toBe(201);
    const rows = [
      productBody(600_001, { serialNumber: 'other' }),
      productBody(600_002, { extensions: { ...ELECTRONICS_EXTENSIONS, weeeCategory: 'WEEE-4' } }),
      productBody(600_003, { serialNumber: '274877906944' }),
      productBody(600_004, { extensions: null }),
    ];
    const job = await finished((await upload(JSON.stringify(rows), 'application/json')).body.data.statusUrl);
    expect(job.errors.map((e: { code: string }) => e.code)).toEqual([
      'DUPLICATE_GTIN',
      'VALIDATION_ERROR',
      'VALIDATION_ERROR',
      'EXTENSIONS_REQUIRED',
    ]);
    expect(job.errors[0].message).toMatch(/already used/);
  });
});

describe.each(testDialects())('ingest after a crash (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, ingest: { start: false, rowsPerCommit: 100 } });
  });
  afterAll(() => t.close());

  it('resumes after the last committed row: nothing lost, nothing twice', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => JSON.stringify(productBody(700_000 + i))).join('\n');
    const r = await t.call('POST', '/api/v2/ingest/products', {
      key: t.tenants.a.admin,
      body: rows,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(r.status).toBe(202);
    const jobId = r.body.data.id as string;

    // A worker commits three chunks and hands the job back (a graceful hand-back costs no attempt)...
    expect(await t.cp.ingest.runOnce({ maxCommits: 3 })).toBe('yielded');
    // ...then another worker claims it and dies holding the lease.
    await t.cp.store.db
      .updateTable('ingest_jobs')
      .set({
        attempts: 1,
        lease_owner: 'crashed-worker',
        locked_until: new Date(Date.now() + 3_600_000).toISOString(),
      })
      .where('id', '=', jobId)
      .where('attempts', '=', 0)
      .execute();
    let status = (await t.call('GET', r.body.data.statusUrl, { key: t.tenants.a.admin })).body.data;
    expect(status).toMatchObject({ status: 'processing', processedRows: 300, createdRows: 300 });

    // The restarted control plane waits for the lease, then takes the job over where it stopped.
    await t.restart({ ingest: { rowsPerCommit: 100, pollMs: 20 } });
    expect(await t.cp.ingest.runOnce()).toBe('idle');
    await t.cp.store.db
      .updateTable('ingest_jobs')
      .set({ locked_until: new Date(Date.now() - 1).toISOString() })
      .where('id', '=', jobId)
      .execute();
    for (let i = 0; i < 400 && status.status !== 'completed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await t.call('GET', r.body.data.statusUrl, { key: t.tenants.a.admin })).body.data;
    }
    expect(status).toMatchObject({
      status: 'completed',
      totalRows: 1000,
      processedRows: 1000,
      createdRows: 1000,
      failedRows: 0,
      attempts: 2,
    });
    const products = await t.cp.store.db
      .selectFrom('products')
      .select('ingest_row')
      .where('ingest_job_id', '=', jobId)
      .execute();
    expect(products).toHaveLength(1000);
    expect(new Set(products.map((p) => p.ingest_row)).size).toBe(1000);
  });

  it('leaves a job leased to a live worker alone, and fences off a worker whose lease was taken', async () => {
    const rows = Array.from({ length: 300 }, (_, i) => JSON.stringify(productBody(800_000 + i))).join('\n');
    await t.cp.ingest.stop();
    const r = await t.call('POST', '/api/v2/ingest/products', {
      key: t.tenants.a.admin,
      body: rows,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    const jobId = r.body.data.id as string;
    // Another worker holds a live lease: nothing is claimable.
    await t.cp.store.db
      .updateTable('ingest_jobs')
      .set({
        status: 'processing',
        lease_owner: 'other',
        locked_until: new Date(Date.now() + 60_000).toISOString(),
      })
      .where('id', '=', jobId)
      .execute();
    expect(await t.cp.ingest.runOnce()).toBe('idle');
    const job = await t.cp.store.db
      .selectFrom('ingest_jobs')
      .selectAll()
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(job).toMatchObject({ processed_rows: 0, lease_owner: 'other' });
    const stale = await commitProgress(
      t.cp.store.db,
      { id: jobId, owner: 'previous-owner', errorsStored: 0 },
      { processedRows: 100, created: 100, failed: 0, errors: [] },
      { now: Date.now(), leaseMs: 30_000 },
    );
    expect(stale.ok).toBe(false);
    const after = await t.cp.store.db
      .selectFrom('ingest_jobs')
      .selectAll()
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(after).toMatchObject({ processed_rows: 0, created_count: 0 });
  });
});
