/**
 * Compliance through HTTP: regulation packs and their versions, selection by date and priority across a
 * supersession, the ESPR projector on products with complete, partial and no data, a rule that errors, the
 * battery projector's refusal, tenancy and scopes; and a malformed pack that refuses to load.
 */
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { allocate } from '@dpp/testkit/carriers';
import { livePassport } from '@dpp/testkit/passports';
import { productBody } from '@dpp/testkit/products';
import { PackError, SHIPPED_PACKS_DIR, loadPackFiles } from './index.js';

const ESPR = '32024R1781';
const esprPack = () => JSON.parse(readFileSync(path.join(SHIPPED_PACKS_DIR, 'espr-32024R1781.json'), 'utf8'));
const COMPLETE = {
  energyEfficiencyClass: 'B',
  annualEnergyConsumptionKwh: 14,
  repairabilityScore: 7.5,
  sparePartsAvailabilityYears: 7,
  hazardousSubstances: [],
  recycledContentPercentage: 22,
  weeeCategory: 'small_it_telecom',
};
type Finding = { obligationId: string; outcome: string; missing: string[]; reason: string | null };

describe.each(testDialects())('compliance (%s)', (dialect) => {
  let t: TestControlPlane;
  let n = 4000;
  const key = () => t.tenants.a.admin;
  const select = (body: unknown, k = key()) =>
    t.call('POST', '/api/v2/compliance/regulations/select', { key: k, body });
  const evaluate = (id: string, body: Record<string, unknown> = {}, sector = 'espr', k = key()) =>
    t.call('POST', `/api/v2/products/${id}/compliance/${sector}/full`, { key: k, body });
  const outcomes = (findings: Finding[]) =>
    Object.fromEntries(findings.map((f) => [f.obligationId, f.outcome]));
  const ctx = (effectiveDate: string, lifecycleStage = 'placing_on_market') => ({
    region: 'EU',
    productCategory: 'electronics',
    lifecycleStage,
    effectiveDate,
  });
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t?.close());

  it('lists the shipped packs with their states, and reads one whole', async () => {
    const r = await t.call('GET', '/api/v2/compliance/packs', { key: key() });
    expect(r.status, r.text).toBe(200);
    expect(
      r.body.data.map((p: { celex: string; version: string; state: string }) => [
        p.celex,
        p.version,
        p.state,
      ]),
    ).toEqual([
      ['32023R1542', '1.0.0', 'effective'],
      [ESPR, '1.0.0', 'effective'],
    ]);
    const one = await t.call('GET', `/api/v2/compliance/packs/${ESPR}/versions/1.0.0`, { key: key() });
    expect(one.body.data.pack.obligations.map((o: { id: string }) => o.id)).toContain('ESPR_ART9_PASSPORT');
    expect(
      (await t.call('GET', `/api/v2/compliance/packs/${ESPR}/versions/9.9.9`, { key: key() })).status,
    ).toBe(404);
    const versions = await t.call('GET', `/api/v2/compliance/packs/${ESPR}/versions`, { key: key() });
    expect(versions.body.data.map((v: { version: string }) => v.version)).toEqual(['1.0.0']);
    expect((await t.call('GET', '/api/v2/compliance/packs/32099R9999/versions', { key: key() })).status).toBe(
      404,
    );
  });

  it('selects the obligations that apply at a date, at or above a priority', async () => {
    const high = await select({ context: ctx('2026-01-01'), minimumPriorityLevel: 'HIGH' });
    expect(high.status, high.text).toBe(200);
    expect(high.body.data.obligations.map((o: { id: string }) => o.id)).toEqual([
      'ESPR_ART10_DATA_CARRIER',
      'ESPR_ART10_UNIQUE_IDENTIFIER',
      'ESPR_ART7_SUBSTANCES_OF_CONCERN',
      'ESPR_ART9_PASSPORT',
    ]);
    const ids = async (date: string) =>
      (await select({ context: ctx(date), minimumPriorityLevel: 'MEDIUM' })).body.data.obligations.map(
        (o: { id: string }) => o.id,
      );
    expect(await ids('2026-07-18')).not.toContain('ESPR_ART13_REGISTRY'); // the registry applies from 2026-07-19
    expect(await ids('2026-07-19')).toContain('ESPR_ART13_REGISTRY');
    const textiles = await select({
      context: { ...ctx('2026-01-01'), productCategory: 'textiles' },
      minimumPriorityLevel: 'LOW',
    });
    expect(textiles.body.data.obligations.map((o: { id: string }) => o.id)).not.toContain(
      'ESPR_ART7_ENERGY_PERFORMANCE',
    );
    const before = await select({ context: ctx('2020-01-01'), minimumPriorityLevel: 'LOW' });
    expect(before.body.data).toEqual({ packs: [], obligations: [] }); // no pack was effective then
  });

  it('refuses a bad selection with 400 VALIDATION_ERROR naming the field', async () => {
    for (const [body, field] of [
      [{ context: ctx('yesterday'), minimumPriorityLevel: 'HIGH' }, 'context.effectiveDate'],
      [{ context: ctx('2026-01-01'), minimumPriorityLevel: 'URGENT' }, 'minimumPriorityLevel'],
      [{ context: ctx('2026-01-01', 'shipping'), minimumPriorityLevel: 'HIGH' }, 'context.lifecycleStage'],
      [{ minimumPriorityLevel: 'HIGH' }, 'context'],
    ] as const) {
      const r = await select(body);
      expect(r.status, `${field}: ${r.text}`).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { field } });
    }
  });

  it('judges a product with complete data FullyCompliant, and changes nothing else', async () => {
    const p = await livePassport(t, key(), ++n, { overrides: { extensions: COMPLETE } });
    const before = await t.call('GET', `/api/v2/products/${p.id}`, { key: key() });
    const r = await evaluate(p.id, { effectiveDate: '2026-06-01' });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({
      status: 'FullyCompliant',
      score: 100,
      packs: [{ celex: ESPR, version: '1.0.0' }],
    });
    expect(outcomes(r.body.data.findings)).toMatchObject({
      ESPR_ART9_PASSPORT: 'pass',
      ESPR_ART10_DATA_CARRIER: 'pass',
      ESPR_ART7_SUBSTANCES_OF_CONCERN: 'pass',
      ESPR_ART13_REGISTRY: 'not_evaluated', // not yet applicable on 2026-06-01
    });
    // Now the registry obligation applies and the passport is not in the registry: a fail, never a pass.
    const now = await evaluate(p.id);
    expect(now.body.data.status).toBe('PartiallyCompliant');
    expect(outcomes(now.body.data.findings).ESPR_ART13_REGISTRY).toBe('fail');
    const latest = await t.call('GET', `/api/v2/products/${p.id}/compliance/espr/full`, { key: key() });
    expect(latest.body.data.evaluationId).toBe(now.body.data.evaluationId);
    const all = await t.call('GET', `/api/v2/products/${p.id}/compliance/evaluations`, { key: key() });
    expect(all.body.data.map((e: { evaluationId: string }) => e.evaluationId)).toEqual([
      now.body.data.evaluationId,
      r.body.data.evaluationId,
    ]);
    const after = await t.call('GET', `/api/v2/products/${p.id}`, { key: key() });
    expect(after.body).toEqual(before.body);
  });

  it('never judges partial data compliant: Indeterminate, naming what is missing', async () => {
    const { recycledContentPercentage: _r, sparePartsAvailabilityYears: _s, ...partial } = COMPLETE;
    const p = await livePassport(t, key(), ++n, { overrides: { extensions: partial } });
    const r = await evaluate(p.id, { effectiveDate: '2026-06-01' });
    expect(r.body.data).toMatchObject({ status: 'Indeterminate', score: 0 }); // no score until all can be judged
    expect(outcomes(r.body.data.findings).ESPR_ART9_PASSPORT).toBe('pass');
    const repair = r.body.data.findings.find(
      (f: Finding) => f.obligationId === 'ESPR_ART7_REPAIR_INFORMATION',
    );
    expect(repair).toMatchObject({
      outcome: 'indeterminate',
      missing: ['product.extensions.sparePartsAvailabilityYears'],
    });
  });

  it('scores a product with no compliance data 0, Indeterminate, with every missing piece named', async () => {
    const created = await t.call('POST', '/api/v2/products', {
      key: key(),
      body: productBody(++n, {
        category: 'furniture',
        // What the category schema requires to exist, and nothing any ESPR obligation reads.
        extensions: { primaryMaterial: 'solid_wood', weightKg: 12, forestCertification: 'FSC' },
      }),
    });
    expect(created.status, created.text).toBe(201);
    const r = await evaluate(created.body.id, { effectiveDate: '2026-06-01' });
    expect(r.body.data).toMatchObject({ status: 'Indeterminate', score: 0 });
    const applicable = r.body.data.findings.filter((f: Finding) => f.outcome !== 'not_evaluated');
    expect(applicable.length).toBeGreaterThan(0);
    // Only its identity can be judged (it has a GTIN); everything else lacks data, and is named.
    const judged = applicable.filter((f: Finding) => f.outcome !== 'indeterminate');
    expect(judged.map((f: Finding) => f.obligationId)).toEqual(['ESPR_ART10_UNIQUE_IDENTIFIER']);
    expect(
      applicable
        .filter((f: Finding) => f.outcome === 'indeterminate')
        .every((f: Finding) => f.missing.length > 0),
    ).toBe(true);
    expect(applicable.flatMap((f: Finding) => f.missing)).toContain('passport.state');

    // An electronics product cannot exist without its required fields (422 EXTENSIONS_REQUIRED); with only those
    // and no passport it is Indeterminate too, scored 0, never compliant.
    const bare = await t.call('POST', '/api/v2/products', {
      key: key(),
      body: productBody(++n, {
        extensions: {
          energyEfficiencyClass: 'C',
          annualEnergyConsumptionKwh: 30,
          repairabilityScore: 4,
          weeeCategory: 'small_it_telecom',
        },
      }),
    });
    const e = await evaluate(bare.body.id, { effectiveDate: '2026-06-01' });
    expect(e.body.data).toMatchObject({ status: 'Indeterminate', score: 0 });
    expect(e.body.data.findings.flatMap((f: Finding) => f.missing)).toEqual(
      expect.arrayContaining(['passport.state', 'product.extensions.hazardousSubstances']),
    );
  });

  it('refuses to judge batteries (503 COMPLIANCE_EVALUATION_UNAVAILABLE), keeps products to their workspace, checks scopes', async () => {
    const p = await livePassport(t, key(), ++n);
    for (const method of ['POST', 'GET'] as const) {
      const r = await t.call(method, `/api/v2/products/${p.id}/compliance/battery/full`, {
        key: key(),
        body: method === 'POST' ? {} : undefined,
      });
      expect(r.status, r.text).toBe(503);
      expect(r.body.error.code).toBe('COMPLIANCE_EVALUATION_UNAVAILABLE');
    }
    expect((await evaluate(p.id, {}, 'espr', t.tenants.b.admin)).status).toBe(404);
    expect(
      (await t.call('GET', `/api/v2/products/${p.id}/compliance/espr/full`, { key: t.tenants.b.admin }))
        .status,
    ).toBe(404);
    expect((await evaluate(p.id, {}, 'nosuchsector')).status).toBe(404);
    const denied = await evaluate(p.id, {}, 'espr', t.tenants.a.readOnly);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({
      code: 'API_SCOPE_DENIED',
      details: { required: 'compliance:evaluate' },
    });
  });

  it('supersedes a pack with a new version for the workspace; selection is point in time; versions only go up', async () => {
    const next = esprPack();
    next.version = '1.1.0';
    next.effectiveFrom = '2026-09-01T00:00:00Z';
    next.obligations.push({
      id: 'ESPR_ART5_DURABILITY',
      title: 'The expected lifetime is given',
      article: 'Art. 5(1)(a)',
      priority: 'HIGH',
      appliesTo: { regions: ['EU'], categories: ['electronics'], lifecycleStages: ['placing_on_market'] },
      requires: ['product.extensions.productLifetimeYears'],
      rule: { '>': [{ var: 'product.extensions.productLifetimeYears' }, 0] },
      failure: 'The expected lifetime must be more than 0 years',
    });
    const published = await t.call('POST', `/api/v2/compliance/packs/${ESPR}/versions`, {
      key: key(),
      body: next,
    });
    expect(published.status, published.text).toBe(201);
    expect(published.body.data).toMatchObject({ version: '1.1.0', state: 'effective', source: 'workspace' });
    const states = (await t.call('GET', '/api/v2/compliance/packs', { key: key() })).body.data
      .filter((p: { celex: string }) => p.celex === ESPR)
      .map((p: { version: string; state: string }) => `${p.version} ${p.state}`);
    expect(states).toEqual(['1.1.0 effective', '1.0.0 superseded']);
    const highIds = async (date: string, k = key()) => {
      const r = await select({ context: ctx(date), minimumPriorityLevel: 'HIGH' }, k);
      return { ids: r.body.data.obligations.map((o: { id: string }) => o.id), packs: r.body.data.packs };
    };
    expect((await highIds('2026-10-01')).ids).toContain('ESPR_ART5_DURABILITY');
    expect((await highIds('2026-10-01')).packs).toEqual([
      expect.objectContaining({ celex: ESPR, version: '1.1.0' }),
    ]);
    expect((await highIds('2026-08-31')).ids).not.toContain('ESPR_ART5_DURABILITY');
    // Another workspace still judges by the shipped version.
    expect((await highIds('2026-10-01', t.tenants.b.admin)).ids).not.toContain('ESPR_ART5_DURABILITY');
    for (const [version, effectiveFrom] of [
      ['1.0.5', '2026-10-01T00:00:00Z'],
      ['1.1.0', '2026-10-01T00:00:00Z'],
      ['1.2.0', '2025-01-01T00:00:00Z'],
    ]) {
      const r = await t.call('POST', `/api/v2/compliance/packs/${ESPR}/versions`, {
        key: key(),
        body: { ...next, version, effectiveFrom },
      });
      expect(r.status, `${version}: ${r.text}`).toBe(409);
      expect(r.body.error.code).toBe('INVALID_TRANSITION');
    }
    const malformed = await t.call('POST', `/api/v2/compliance/packs/${ESPR}/versions`, {
      key: key(),
      body: { ...next, version: '1.3.0', obligations: [{ ...next.obligations[0], priority: 'URGENT' }] },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.field).toBe('obligations[0].priority');
    const denied = await t.call('POST', `/api/v2/compliance/packs/${ESPR}/versions`, {
      key: t.tenants.a.readOnly,
      body: { ...next, version: '1.4.0' },
    });
    expect(denied.status).toBe(403);
  });

  it('reports a rule that fails to run as Unknown, never as a pass', async () => {
    const broken = esprPack();
    broken.version = '1.0.1';
    broken.effectiveFrom = '2026-01-01T00:00:00Z';
    // A rule that answers a number, not true or false: it cannot be judged.
    broken.obligations[0].rule = { var: 'product.extensions.hazardousSubstances' };
    const k = t.tenants.b.admin;
    const published = await t.call('POST', `/api/v2/compliance/packs/${ESPR}/versions`, {
      key: k,
      body: broken,
    });
    expect(published.status, published.text).toBe(201);
    const p = await livePassport(t, k, ++n, { overrides: { extensions: COMPLETE } });
    const r = await evaluate(p.id, { effectiveDate: '2026-06-01' }, 'espr', k);
    expect(r.body.data).toMatchObject({ status: 'Unknown', score: null });
    const f = r.body.data.findings.find((x: Finding) => x.obligationId === broken.obligations[0].id);
    expect(f.outcome).toBe('error');
    expect(f.reason).toMatch(/not true or false/);
  });

  it('lets a rule read the product carriers: a pack version with a carrier obligation judges them', async () => {
    const k = t.tenants.b.admin;
    const withCarriers = esprPack();
    withCarriers.version = '1.0.2';
    withCarriers.effectiveFrom = '2026-01-02T00:00:00Z';
    withCarriers.obligations = [
      {
        id: 'ESPR_ART10_CARRIERS_ALLOCATED',
        title: 'Serials were allocated for the data carriers of the batch',
        article: 'Art. 10(1)',
        priority: 'LOW',
        appliesTo: { regions: ['EU'], categories: ['*'], lifecycleStages: ['manufacturing'] },
        requires: ['carriers.allocated'],
        rule: { '>': [{ var: 'carriers.allocated' }, 0] },
        failure: 'Allocate serials (POST /api/v2/carriers/batch)',
      },
    ];
    expect(
      (await t.call('POST', `/api/v2/compliance/packs/${ESPR}/versions`, { key: k, body: withCarriers }))
        .status,
    ).toBe(201);
    const p = await livePassport(t, k, ++n, { overrides: { extensions: COMPLETE } });
    const judge = async () =>
      (await evaluate(p.id, { effectiveDate: '2026-06-01', lifecycleStage: 'manufacturing' }, 'espr', k)).body
        .data as { status: string; findings: (Finding & { observed: Record<string, unknown> })[] };
    expect((await judge()).status).toBe('NonCompliant');
    await allocate(t, k, p.id, 3);
    const after = await judge();
    expect(after.status).toBe('FullyCompliant');
    expect(after.findings[0]!.observed).toEqual({ 'carriers.allocated': 3 });
  });
});

describe('shipped regulation packs', () => {
  it('load and check at start; a malformed one refuses to load, naming the file and the field', () => {
    expect(loadPackFiles(SHIPPED_PACKS_DIR).map((p) => p.celex)).toEqual(['32023R1542', ESPR]);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'packs-'));
    const bad = esprPack();
    bad.obligations[2].appliesTo.lifecycleStages = ['shipping'];
    writeFileSync(path.join(dir, 'espr.json'), JSON.stringify(bad));
    expect(() => loadPackFiles(dir)).toThrow(PackError);
    expect(() => loadPackFiles(dir)).toThrow(
      /^compliance pack packs-\w+\/espr\.json: obligations\[2\]\.appliesTo\.lifecycleStages\[0\]: /,
    );
    const unknownOp = esprPack();
    unknownOp.obligations[0].rule = { method: [{ var: 'product' }, 'constructor'] };
    writeFileSync(path.join(dir, 'espr.json'), JSON.stringify(unknownOp));
    expect(() => loadPackFiles(dir)).toThrow(/obligations\[0\]\.rule: unknown operation method/);
  });
});
