import { randomUUID } from 'node:crypto';
import { buildDigitalLink, decodeSgtin198, encodeSgtin198, sgtinPureIdentityUri } from '@dpp/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { allocate, createProduct, eventsOf, exportCsv } from '@dpp/testkit/carriers';

const BATCH = '/api/v2/carriers/batch';
const BASE = 'https://id.example.com';

describe.each(testDialects())('POST /carriers/batch with registered serials (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, env: { PUBLIC_BASE_URL: BASE } });
    key = t.tenants.a.admin;
  });
  afterAll(() => t?.close());

  const register = (productId: string, serials: unknown, headers: Record<string, string> = {}) =>
    t.call('POST', BATCH, { key, body: { productId, serials }, headers });

  it('registers alphanumeric serials in the order sent, numbered by the counter, each with its EPC', async () => {
    const p = await createProduct(t, key);
    const before = await allocate(t, key, p.id, 2);
    const serials = ['AB-1', '0042', 'x/y%z', 'ABCDEFGHIJKLMNOPQRST', 'q"u,o'];
    const res = await register(p.id, serials);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ productId: p.id, gtin: p.gtin, allocated: 5, serials });
    // The counter moved past them: the next count batch never reuses their numbers.
    const after = await allocate(t, key, p.id, 1);
    expect(Number(after.serials[0])).toBe(Number(before.serials[1]) + 1 + serials.length);

    const rows = await exportCsv(t, key, res.body.exportPath.split('?')[1]);
    expect(rows.map((r) => r.serial)).toEqual(serials);
    for (const r of rows) {
      expect(r.digital_link).toBe(buildDigitalLink(BASE, p.gtin, r.serial));
      expect(r.element_string).toBe(`(01)${p.gtin}(21)${r.serial}`);
      expect(r.sgtin96_epc).toBe('');
      expect(r.sgtin198_epc).toBe(
        encodeSgtin198({ gtin: p.gtin, serial: r.serial, filter: 1, companyPrefixLength: 7 }).hex,
      );
      expect(decodeSgtin198(r.sgtin198_epc).serial).toBe(r.serial);
    }
    expect(rows.find((r) => r.serial === 'x/y%z')!.digital_link).toBe(`${BASE}/01/${p.gtin}/21/x%2Fy%25z`);
    // The whole product's file pages through both kinds in counter order.
    const all = await exportCsv(t, key, `productId=${p.id}`);
    expect(all.map((r) => r.serial)).toEqual([...before.serials, ...serials, ...after.serials]);
    const json = await t.call('GET', `/api/v2/carriers/export?productId=${p.id}&format=json`, { key });
    expect(json.body.data[2]).toEqual({ ...rows[0] });

    const [event] = (await eventsOf(t, t.tenants.a.id, 'carrier.generated')).filter(
      (e) => e.data.batchId === res.body.batchId,
    );
    expect(event!.data).toMatchObject({ allocated: 5, firstSerial: 'AB-1', lastSerial: 'q"u,o' });
  });

  it("follows the product's epcScheme: sgtin-198 for every serial, sgtin-96 refuses what it cannot hold", async () => {
    const p198 = await createProduct(t, key, { epcScheme: 'sgtin-198' });
    const counted = await allocate(t, key, p198.id, 2);
    const registered = await register(p198.id, ['07', 'Z9']);
    expect(registered.status, registered.text).toBe(201);
    const rows = await exportCsv(t, key, `productId=${p198.id}`);
    expect(rows.map((r) => r.serial)).toEqual([...counted.serials, '07', 'Z9']);
    for (const r of rows) {
      expect(r.sgtin96_epc).toBe('');
      expect(decodeSgtin198(r.sgtin198_epc).serial).toBe(r.serial);
    }

    const p96 = await createProduct(t, key, { epcScheme: 'sgtin-96' });
    const refused = await register(p96.id, ['0', 'A1', '01']);
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'SERIAL_NOT_SGTIN96',
      details: { productId: p96.id, serials: ['A1', '01'], count: 2 },
    });
    expect(await exportCsv(t, key, `productId=${p96.id}`)).toEqual([]);
    // '0' fits SGTIN-96 and is not of the counter's form (which starts at 1).
    expect((await register(p96.id, ['0'])).status).toBe(201);
    const [zero] = await exportCsv(t, key, `productId=${p96.id}`);
    expect([zero!.serial, zero!.sgtin96_epc.length, zero!.sgtin198_epc]).toEqual(['0', 24, '']);
  });

  it('refuses bad serials all or nothing, naming them, with one error per kind', async () => {
    const p = await createProduct(t, key);
    const taken = await register(p.id, ['T-1']);
    expect(taken.status).toBe(201);
    const cases: [unknown, number, string, Record<string, unknown>][] = [
      [
        ['OK-1', 'has space', 'A'.repeat(21), 'caf\u00e9'],
        400,
        'INVALID_SERIAL',
        { serials: ['has space', 'A'.repeat(21), 'caf\u00e9'], count: 3 },
      ],
      [['D-1', 'D-2', 'D-1'], 400, 'VALIDATION_ERROR', { field: 'serials', duplicates: ['D-1'] }],
      [
        ['N-1', '17', '0017', '274877906944'],
        422,
        'SERIAL_RESERVED_FOR_COUNTER',
        { serials: ['17', '274877906944'], count: 2 },
      ],
      [['N-2', 'T-1'], 409, 'SERIAL_ALREADY_ALLOCATED', { serials: ['T-1'], count: 1 }],
    ];
    for (const [serials, status, code, details] of cases) {
      const res = await register(p.id, serials);
      expect(res.status, res.text).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.details).toMatchObject(details);
    }
    // Nothing of a refused request was registered.
    expect((await exportCsv(t, key, `productId=${p.id}`)).map((r) => r.serial)).toEqual(['T-1']);
    // A serial of another workspace is not this one's.
    const theirs = await createProduct(t, t.tenants.b.admin);
    const res = await t.call('POST', BATCH, {
      key: t.tenants.b.admin,
      body: { productId: theirs.id, serials: ['T-1'] },
    });
    expect(res.status, res.text).toBe(201);
  });

  it('takes exactly one of count and serials, 1 to 10,000 serials', async () => {
    const p = await createProduct(t, key);
    for (const body of [
      { productId: p.id },
      { productId: p.id, count: 1, serials: ['A'] },
      { productId: p.id, serials: [] },
      { productId: p.id, serials: Array.from({ length: 10_001 }, (_, i) => `S${i}`) },
      { productId: p.id, serials: 'A1' },
      { productId: p.id, serials: [1] },
    ]) {
      const res = await t.call('POST', BATCH, { key, body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    const many = Array.from({ length: 10_000 }, (_, i) => `M-${i}`);
    const res = await register(p.id, many);
    expect(res.status, res.text).toBe(201);
    expect(res.body.serials).toHaveLength(10_000);
  });

  it('lets one of two concurrent registrations of a serial in: the other is 409 naming it', async () => {
    const p = await createProduct(t, key);
    const q = await createProduct(t, key);
    const answers = await Promise.all([register(p.id, ['C-1', 'C-2']), register(q.id, ['C-3', 'C-2'])]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409]);
    const refused = answers.find((r) => r.status === 409)!;
    expect(refused.body.error).toMatchObject({
      code: 'SERIAL_ALREADY_ALLOCATED',
      details: { serials: ['C-2'] },
    });
    const rows = [
      ...(await exportCsv(t, key, `productId=${p.id}`)),
      ...(await exportCsv(t, key, `productId=${q.id}`)),
    ];
    expect(rows.filter((r) => r.serial === 'C-2')).toHaveLength(1);
    expect(rows).toHaveLength(2);
  });

  it('replays an Idempotency-Key without registering again', async () => {
    const p = await createProduct(t, key);
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await register(p.id, ['I-1', 'I-2'], headers);
    expect(first.status).toBe(201);
    const again = await register(p.id, ['I-1', 'I-2'], headers);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await register(p.id, ['I-3'], headers)).status).toBe(409);
    expect((await register(p.id, ['I-1'])).status).toBe(409);
  });

  it('records print outcomes of registered serials, with an EPCIS event naming the escaped EPC URI', async () => {
    const p = await createProduct(t, key);
    const serials = ['P/1', 'P%2', 'P-3'];
    expect((await register(p.id, serials)).status).toBe(201);
    const res = await t.call('POST', '/api/v2/carriers/print-status', {
      key,
      body: {
        results: [
          { serial: 'P/1', status: 'printed' },
          { serial: 'P%2', status: 'failed', reason: 'jam' },
          { serial: 'P-4', status: 'printed' },
        ],
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      updated: ['P/1', 'P%2'],
      unknown: ['P-4'],
      printed: ['P/1'],
      failed: ['P%2'],
    });
    const failed = await exportCsv(t, key, `productId=${p.id}&printState=failed`);
    expect(failed.map((r) => r.serial)).toEqual(['P%2']);
    const epc = sgtinPureIdentityUri(p.gtin, 'P/1', 7);
    expect(epc).toContain('P%2F1');
    const events = await t.call(
      'GET',
      `/api/v2/epcis/events?bizStep=commissioning&epc=${encodeURIComponent(epc)}`,
      { key },
    );
    expect(events.status, events.text).toBe(200);
    expect(JSON.stringify(events.body)).toContain(JSON.stringify(epc));
  });
});
