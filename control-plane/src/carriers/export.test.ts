import { randomUUID } from 'node:crypto';
import {
  buildDigitalLink,
  decodeSgtin96,
  encodeSgtin198,
  encodeSgtin96,
  sgtinPureIdentityUri,
} from '@dpp/shared';
import { CompiledQuery, createQueryId, type RootOperationNode, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import type { Db } from '../store/index.js';
import { labelCodes } from './codes.js';
import { exportPages } from './export.js';
import { allocate, createProduct, exportCsv, type CsvRow } from '@dpp/testkit/carriers';

const EXPORT = '/api/v2/carriers/export';
/** The Digital Link origin of this suite's control plane. */
const BASE = 'https://id.example.com';

describe.each(testDialects())('GET /carriers/export (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let p7: { id: string; gtin: string };
  let p9: { id: string; gtin: string };
  let batch7: { batchId: string; serials: string[]; exportPath: string };
  let batch9: { batchId: string; serials: string[]; exportPath: string };
  let later7: { batchId: string; serials: string[] };

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, env: { PUBLIC_BASE_URL: BASE } });
    key = t.tenants.a.admin;
    p7 = await createProduct(t, key);
    p9 = await createProduct(t, key, { companyPrefixLength: 9 });
    batch7 = await allocate(t, key, p7.id, 2_500);
    batch9 = await allocate(t, key, p9.id, 700);
    later7 = await allocate(t, key, p7.id, 300);
  });
  afterAll(() => t?.close());

  function expectRowsOf(rows: CsvRow[], gtin: string, companyPrefixLength: number, serials: string[]) {
    expect(rows.map((r) => r.serial)).toEqual(serials);
    for (const r of rows) {
      expect(r.gtin).toBe(gtin);
      expect(r.digital_link).toBe(buildDigitalLink(BASE, gtin, r.serial));
      expect(r.sgtin96_epc).toBe(
        encodeSgtin96({ gtin, serial: r.serial, filter: 1, companyPrefixLength }).hex,
      );
      expect(r.sgtin198_epc).toBe('');
      expect(r.element_string).toBe(`(01)${gtin}(21)${r.serial}`);
      const decoded = decodeSgtin96(r.sgtin96_epc);
      expect([decoded.gtin, decoded.serial, decoded.filter, decoded.companyPrefixLength]).toEqual([
        r.gtin,
        r.serial,
        1,
        companyPrefixLength,
      ]);
    }
  }

  it("exports a product's serials as CSV with every column; each EPC decodes to its own row", async () => {
    const rows = await exportCsv(t, key, `productId=${p7.id}`);
    expectRowsOf(rows, p7.gtin, 7, [...batch7.serials, ...later7.serials]);
    const rows9 = await exportCsv(t, key, `productId=${p9.id}`);
    expectRowsOf(rows9, p9.gtin, 9, batch9.serials);
  });

  it('narrows to one batch with batchId (the exportPath of carrier.generated)', async () => {
    const rows = await exportCsv(t, key, batch9.exportPath.split('?')[1]!);
    expectRowsOf(rows, p9.gtin, 9, batch9.serials);
    const only = await exportCsv(t, key, `batchId=${later7.batchId}`);
    expect(only.map((r) => r.serial)).toEqual(later7.serials);
    const mismatch = await t.call('GET', `${EXPORT}?productId=${p7.id}&batchId=${batch9.batchId}`, { key });
    expect(mismatch.status).toBe(404);
  });

  it('exports every serial of the workspace without productId, in serial order', async () => {
    const rows = await exportCsv(t, key, '');
    const serials = rows.map((r) => Number(r.serial));
    expect(serials).toHaveLength(3_500);
    expect(serials.every((s, i) => i === 0 || s > serials[i - 1]!)).toBe(true);
    expect(new Set(rows.map((r) => r.gtin))).toEqual(new Set([p7.gtin, p9.gtin]));
  });

  it('exports JSON with the same rows and columns', async () => {
    const res = await t.call('GET', `${EXPORT}?productId=${p9.id}&format=json`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body.data[0]).sort()).toEqual([
      'digital_link',
      'element_string',
      'gtin',
      'serial',
      'sgtin198_epc',
      'sgtin96_epc',
    ]);
    const csv = await exportCsv(t, key, `productId=${p9.id}&format=CSV`);
    expect(res.body.data).toEqual(csv);
    const empty = await t.call('GET', `${EXPORT}?productId=${p9.id}&format=json&printState=printed`, { key });
    expect(empty.body).toEqual({ data: [] });
  });

  it('streams as an attachment', async () => {
    const res = await t.call('GET', `${EXPORT}?productId=${p9.id}`, { key });
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="carriers-${p9.id}.csv"`);
    expect(res.headers.get('content-length')).toBeNull();
  });

  it('filters by printState: pending, printed, and failed as exactly the re-print file', async () => {
    const s = batch9.serials;
    const report = await t.call('POST', '/api/v2/carriers/print-status', {
      key,
      body: {
        results: [
          { serial: s[0]!, status: 'printed', deviceId: 'zt410-1' },
          { serial: s[1]!, status: 'failed', reason: 'ribbon out' },
          { serial: s[2]!, status: 'failed', reason: 'head open' },
          { serial: s[3]!, status: 'failed', reason: 'jam' },
        ],
      },
    });
    expect(report.status).toBe(200);
    const q = (state: string) => `productId=${p9.id}&printState=${state}`;
    expect((await exportCsv(t, key, q('printed'))).map((r) => r.serial)).toEqual([s[0]]);
    expect((await exportCsv(t, key, q('failed'))).map((r) => r.serial)).toEqual([s[1], s[2], s[3]]);
    expect((await exportCsv(t, key, q('pending'))).map((r) => r.serial)).toEqual(s.slice(4));

    // Re-printing a failed label takes it out of the re-print file; a later failure puts one back.
    await t.call('POST', '/api/v2/carriers/print-status', {
      key,
      body: {
        results: [
          { serial: s[1]!, status: 'printed' },
          { serial: s[0]!, status: 'failed', reason: 'smudged' },
        ],
      },
    });
    const reprint = await exportCsv(t, key, q('failed'));
    expect(reprint.map((r) => r.serial)).toEqual([s[0], s[2], s[3]]);
    expectRowsOf(reprint, p9.gtin, 9, [s[0]!, s[2]!, s[3]!]);
    expect((await exportCsv(t, key, q('printed'))).map((r) => r.serial)).toEqual([s[1]]);
  });

  it('refuses an unknown printState with 422 INVALID_PRINT_STATE and an unknown format with 400', async () => {
    for (const state of ['PRINTED', 'done', '']) {
      const res = await t.call('GET', `${EXPORT}?productId=${p7.id}&printState=${state}`, { key });
      expect(res.status, state).toBe(422);
      expect(res.body.error.code).toBe('INVALID_PRINT_STATE');
      expect(res.body.error.details.allowed).toEqual(['printed', 'failed', 'pending']);
    }
    const format = await t.call('GET', `${EXPORT}?productId=${p7.id}&format=xml`, { key });
    expect(format.status).toBe(400);
    expect(format.body.error.details.field).toBe('format');
  });

  it("answers 404 for an unknown product or batch and for another workspace's", async () => {
    expect((await t.call('GET', `${EXPORT}?productId=${randomUUID()}`, { key })).status).toBe(404);
    expect((await t.call('GET', `${EXPORT}?batchId=${randomUUID()}`, { key })).status).toBe(404);
    const b = t.tenants.b.admin;
    expect((await t.call('GET', `${EXPORT}?productId=${p7.id}`, { key: b })).status).toBe(404);
    expect((await t.call('GET', `${EXPORT}?batchId=${batch7.batchId}`, { key: b })).status).toBe(404);
    const theirs = await t.call('GET', EXPORT, { key: b });
    expect(theirs.text).toBe('gtin,serial,digital_link,sgtin96_epc,sgtin198_epc,element_string\r\n');
  });

  it('requires production:view', async () => {
    const res = await t.call('GET', `${EXPORT}?productId=${p7.id}`, { key: t.tenants.a.readOnly });
    expect(res.status).toBe(403);
    expect(res.body.error.details.required).toBe('production:view');
  });

  it('pages by keyset: small pages give the same rows as one page', async () => {
    const db = t.cp.store.db;
    const filter = { tenantId: t.tenants.a.id, productId: p7.id };
    const paged: string[] = [];
    let pages = 0;
    for await (const page of exportPages(db, BASE, filter, 7)) {
      expect(page.length).toBeLessThanOrEqual(7);
      paged.push(...page.map((r) => r.serial));
      pages += 1;
    }
    expect(paged).toEqual([...batch7.serials, ...later7.serials]);
    expect(pages).toBe(Math.ceil(2_800 / 7));
    const range = { first: Number(later7.serials[0]), last: Number(later7.serials[299]) };
    const ranged: string[] = [];
    for await (const page of exportPages(db, BASE, { ...filter, range }, 100)) {
      ranged.push(...page.map((r) => r.serial));
    }
    expect(ranged).toEqual(later7.serials);
  });

  it('builds the same codes as the codec for any serial, up to 2^38 - 1', () => {
    const codes = labelCodes('https://id.example.com/', p9.gtin, 9);
    for (const serial of ['0', '1', '9', '4095', '262143', '262144', '1000000007', '274877906943']) {
      expect(codes.sgtin96(serial)).toBe(
        encodeSgtin96({ gtin: p9.gtin, serial, filter: 1, companyPrefixLength: 9 }).hex,
      );
      expect(codes.digitalLink(serial)).toBe(buildDigitalLink('https://id.example.com/', p9.gtin, serial));
      expect(codes.epcUri(serial)).toBe(
        encodeSgtin96({ gtin: p9.gtin, serial, companyPrefixLength: 9 }).pureIdentityUri,
      );
      expect(codes.epc(serial, 'sgtin-198')).toEqual({
        scheme: 'sgtin-198',
        hex: encodeSgtin198({ gtin: p9.gtin, serial, filter: 1, companyPrefixLength: 9 }).hex,
      });
    }
    // Registered serials: escaped in both URIs, SGTIN-198 only (SGTIN-96 cannot hold them).
    for (const serial of ['0007', 'AB/1', 'a%"&<>?', '274877906944', 'ABCDEFGHIJKLMNOPQRST']) {
      expect(codes.digitalLink(serial)).toBe(buildDigitalLink('https://id.example.com/', p9.gtin, serial));
      expect(codes.epcUri(serial)).toBe(sgtinPureIdentityUri(p9.gtin, serial, 9));
      expect(codes.epc(serial, 'sgtin-198').hex).toBe(
        encodeSgtin198({ gtin: p9.gtin, serial, filter: 1, companyPrefixLength: 9 }).hex,
      );
      expect(() => codes.epc(serial, 'sgtin-96')).toThrow(/SGTIN-96|2\^38/);
      expect(codes.elementString(serial)).toBe(`(01)${p9.gtin}(21)${serial}`);
    }
  });
});

/** `db` with every statement run through it recorded, and those statements compiled as they were sent. */
function recording(db: Db) {
  const nodes: RootOperationNode[] = [];
  const recorded = db.withPlugin({
    transformQuery: (args) => {
      nodes.push(args.node);
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  });
  return {
    db: recorded,
    statements: () => nodes.map((node) => db.getExecutor().compileQuery(node, createQueryId())),
  };
}

describe.each(testDialects())("a product's serials read through its batches (%s)", (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let mine: { id: string };
  /** The product's serials in the order allocated (the export's), and the failed ones among them. */
  const expected: string[] = [];
  const failed = new Set<string>();

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, env: { PUBLIC_BASE_URL: BASE } });
    key = t.tenants.a.admin;
    mine = await createProduct(t, key);
    const other = await createProduct(t, key);
    const register = async (productId: string, serials: string[]) => {
      const res = await t.call('POST', '/api/v2/carriers/batch', { key, body: { productId, serials } });
      expect(res.status, res.text).toBe(201);
      return res.body.serials as string[];
    };
    // Large and small batches, allocated and registered, between batches of another product.
    expected.push(...(await allocate(t, key, mine.id, 23)).serials);
    await allocate(t, key, other.id, 40);
    for (let i = 0; i < 30; i++) {
      expected.push(...(await allocate(t, key, mine.id, 1)).serials);
      if (i % 7 === 0) await allocate(t, key, other.id, 3);
    }
    expected.push(...(await register(mine.id, ['R-1', 'R-2', 'R-3'])));
    await allocate(t, key, other.id, 15);
    expected.push(...(await allocate(t, key, mine.id, 9)).serials);
    expected.push(...(await register(mine.id, ['R-4'])));
    for (const s of [expected[0]!, expected[24]!, expected[40]!, expected[53]!, 'R-2']) failed.add(s);
    const res = await t.call('POST', '/api/v2/carriers/print-status', {
      key,
      body: { results: [...failed].map((serial) => ({ serial, status: 'failed', reason: 'jam' })) },
    });
    expect(res.status, res.text).toBe(200);
  });
  afterAll(() => t?.close());

  async function read(filter: { printState?: 'failed' | 'pending' }, pageSize: number) {
    const pages: string[][] = [];
    const rows = exportPages(
      t.cp.store.db,
      BASE,
      { tenantId: t.tenants.a.id, productId: mine.id, ...filter },
      pageSize,
    );
    for await (const page of rows) pages.push(page.map((r) => r.serial));
    return pages;
  }

  it("gives the product's serials alone, in order, in full pages, at every page size", async () => {
    expect(expected).toHaveLength(23 + 30 + 3 + 9 + 1);
    for (const size of [1, 2, 3, 7, 10, 25, 64, 1_000]) {
      const pages = await read({}, size);
      expect(pages.flat(), `page size ${size}`).toEqual(expected);
      expect(
        pages.slice(0, -1).every((p) => p.length === size),
        `page size ${size}`,
      ).toBe(true);
      expect(pages).toHaveLength(Math.ceil(expected.length / size));
    }
  });

  it('narrows to a print state across batches', async () => {
    for (const size of [1, 2, 4, 1_000]) {
      expect((await read({ printState: 'failed' }, size)).flat()).toEqual(
        expected.filter((s) => failed.has(s)),
      );
      expect((await read({ printState: 'pending' }, size)).flat()).toEqual(
        expected.filter((s) => !failed.has(s)),
      );
    }
  });

  it('reads many small batches together: a few statements a page, not one a batch', async () => {
    const counting = recording(t.cp.store.db);
    let rows = 0;
    const filter = { tenantId: t.tenants.a.id, productId: mine.id };
    for await (const page of exportPages(counting.db, BASE, filter, 1_000)) rows += page.length;
    expect(rows).toBe(expected.length);
    // 34 batches on one page: the batches listed (twice: the second finds no more), one read of all of them
    // together, and the codes of the product's one GTIN.
    expect(counting.statements().length).toBeLessThanOrEqual(6);
  });

  it.runIf(dialect === 'postgres')(
    'reads a large batch a page of numbers at a time: no read touches more than a page, whatever the plan',
    async () => {
      const db = t.cp.store.db;
      const large = await createProduct(t, key);
      await allocate(t, key, large.id, 3_000);
      const recorded = recording(db);
      let rows = 0;
      const filter = { tenantId: t.tenants.a.id, productId: large.id };
      for await (const page of exportPages(recorded.db, BASE, filter, 100)) rows += page.length;
      expect(rows).toBe(3_000);
      const reads = recorded.statements().filter((q) => /from "carrier_serials"/.test(q.sql));
      expect(reads).toHaveLength(30);
      interface PlanNode {
        'Relation Name'?: string;
        'Actual Rows': number;
        Plans?: PlanNode[];
      }
      const all = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(all)];
      for (const read of reads) {
        // Without an ordered index scan (as when statistics taken before the allocation make a bitmap scan and a
        // sort look cheaper), a read bounded only by the batch's end would take the rest of the batch each page.
        const { rows: plan } = await db.transaction().execute(async (trx) => {
          await sql`set local enable_indexscan = off`.execute(trx);
          return trx.executeQuery<{ 'QUERY PLAN': unknown }>(
            CompiledQuery.raw(`explain (analyze, format json) ${read.sql}`, [...read.parameters]),
          );
        });
        const [{ Plan }] = plan[0]!['QUERY PLAN'] as [{ Plan: PlanNode }];
        const touched = all(Plan).filter((n) => n['Relation Name'] === 'carrier_serials');
        expect(touched.length).toBeGreaterThan(0);
        expect(Math.max(...touched.map((n) => n['Actual Rows']))).toBeLessThanOrEqual(100);
      }
    },
  );

  it.runIf(dialect === 'sqlite')(
    "reads batches together from the product's batches outward, never by walking the tenant's serials",
    async () => {
      const db = t.cp.store.db;
      const recorded = recording(db);
      const filter = { tenantId: t.tenants.a.id, productId: mine.id };
      for await (const page of exportPages(recorded.db, BASE, filter, 1_000))
        expect(page.length).toBeGreaterThan(0);
      const reads = recorded
        .statements()
        .filter((q) => q.sql.includes('"carrier_batches"') && q.sql.includes('"carrier_serials"'));
      expect(reads).toHaveLength(1);
      const plan = await db.executeQuery<{ detail: string }>(
        CompiledQuery.raw(`explain query plan ${reads[0]!.sql}`, [...reads[0]!.parameters]),
      );
      // The outer loop is a search of the batches by product; each batch's serials a range of the primary key.
      const loops = plan.rows.map((r) => r.detail).filter((d) => /^(SEARCH|SCAN) /.test(d));
      expect(loops[0]).toMatch(/^SEARCH b USING INDEX carrier_batches_product_serial/);
      expect(loops[1]).toMatch(/^SEARCH s USING .*\(tenant_id=\? AND seq>\? AND seq<\?\)/);
    },
  );
});
