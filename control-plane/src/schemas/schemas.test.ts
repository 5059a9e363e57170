import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../tenants/index.js';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { PRODUCT_COLUMNS } from './import-template.js';

describe.each(testDialects())('category schema routes (%s)', (dialect) => {
  let t: TestControlPlane;
  let legacyKey: string;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    const created = await createApiKey(
      t.cp.store.db,
      { tenantId: t.tenants.a.id, name: 'legacy', scopes: ['products:view'] },
      { actor: { type: 'system', id: null } },
    );
    legacyKey = created.secret;
  });
  afterAll(() => t.close());

  it('lists every category with versions, jurisdiction, effective window and effectiveNow, with a read-only key', async () => {
    const r = await t.call('GET', '/api/v2/schemas/categories', { key: t.tenants.a.readOnly });
    expect(r.status).toBe(200);
    const names = r.body.data.map((c: { category: string }) => c.category);
    expect(names).toEqual(['battery', 'electronics', 'furniture', 'textiles']);
    const electronics = r.body.data.find((c: { category: string }) => c.category === 'electronics');
    expect(electronics).toMatchObject({
      jurisdiction: 'EU',
      currentVersion: '2.0.0',
      effectiveNow: true,
      effectiveUntil: null,
      _links: { importTemplate: '/api/v2/schemas/categories/electronics/import-template?jurisdiction=EU' },
    });
    expect(
      electronics.versions.map((v: { version: string; effectiveNow: boolean }) => [
        v.version,
        v.effectiveNow,
      ]),
    ).toEqual([
      ['1.0.0', false],
      ['2.0.0', true],
    ]);
    const filtered = await t.call('GET', '/api/v2/schemas/categories?jurisdiction=US', {
      key: t.tenants.a.readOnly,
    });
    expect(filtered.body.data).toEqual([]);
  });

  it('answers the category schema record effective now', async () => {
    const r = await t.call('GET', '/api/v2/schemas/categories/electronics', { key: t.tenants.a.readOnly });
    expect(r.status).toBe(200);
    const rec = r.body.data;
    expect(rec).toMatchObject({
      category: 'electronics',
      schemaId: 'urn:dpp:schema:eu:electronics:2.0.0',
      schemaRegistryId: 'urn:dpp:schema-registry:eu:electronics',
      version: '2.0.0',
      jurisdiction: 'EU',
      effectiveFrom: '2025-06-20T00:00:00.000Z',
      effectiveUntil: null,
      _links: { importTemplate: '/api/v2/schemas/categories/electronics/import-template?jurisdiction=EU' },
    });
    expect(rec.fieldSchema.properties.repairabilityScore).toMatchObject({ minimum: 0, maximum: 10 });
    expect(rec.fieldSchema.required).toContain('weeeCategory');
  });

  it('selects the version effective at date (point in time)', async () => {
    const old = await t.call('GET', '/api/v2/schemas/categories/electronics?date=2025-01-15', {
      key: t.tenants.a.readOnly,
    });
    expect(old.status).toBe(200);
    expect(old.body.data).toMatchObject({
      version: '1.0.0',
      effectiveUntil: '2025-06-20T00:00:00.000Z',
      effectiveNow: false,
    });
    expect(old.body.data.fieldSchema.properties.repairabilityScore).toBeUndefined();
    const edge = await t.call('GET', '/api/v2/schemas/categories/electronics?date=2025-06-20T00:00:00Z', {
      key: t.tenants.a.readOnly,
    });
    expect(edge.body.data.version).toBe('2.0.0');
    const offset = await t.call(
      'GET',
      '/api/v2/schemas/categories/electronics?date=2025-06-20T01:00:00%2B02:00',
      {
        key: t.tenants.a.readOnly,
      },
    );
    expect(offset.body.data.version).toBe('1.0.0');
  });

  it('omits fieldSchema when includeFields=false', async () => {
    const r = await t.call('GET', '/api/v2/schemas/categories/battery?includeFields=false', {
      key: t.tenants.a.readOnly,
    });
    expect(r.status).toBe(200);
    expect(r.body.data.fieldSchema).toBeUndefined();
    expect(r.body.data.schemaId).toBe('urn:dpp:schema:eu:battery:2.0.0');
  });

  it('answers a miss with 404 SCHEMA_NOT_FOUND listing availableCategories', async () => {
    for (const path of [
      '/api/v2/schemas/categories/toys',
      '/api/v2/schemas/categories/electronics?jurisdiction=US',
      '/api/v2/schemas/categories/electronics?date=2020-01-01',
    ]) {
      const r = await t.call('GET', path, { key: t.tenants.a.readOnly });
      expect(r.status, path).toBe(404);
      expect(r.body.error.code).toBe('SCHEMA_NOT_FOUND');
      expect(Array.isArray(r.body.error.details.availableCategories)).toBe(true);
    }
    const toys = await t.call('GET', '/api/v2/schemas/categories/toys', { key: t.tenants.a.readOnly });
    expect(toys.body.error.details.availableCategories).toEqual([
      'battery',
      'electronics',
      'furniture',
      'textiles',
    ]);
    const early = await t.call('GET', '/api/v2/schemas/categories/electronics?date=2024-01-05', {
      key: t.tenants.a.readOnly,
    });
    expect(early.body.data.version).toBe('1.0.0');
  });

  it.each([
    ['date=yesterday', 'date'],
    ['includeFields=maybe', 'includeFields'],
    ['jurisdiction=E1', 'jurisdiction'],
  ])('refuses a bad query value (%s) with 400 naming it', async (query, field) => {
    const r = await t.call('GET', `/api/v2/schemas/categories/electronics?${query}`, {
      key: t.tenants.a.readOnly,
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(r.body.error.details.field).toBe(field);
  });

  it('renders the import template as text/csv whose header is the product columns and the schema fields', async () => {
    const record = await t.call('GET', '/api/v2/schemas/categories/textiles', { key: t.tenants.a.readOnly });
    const csv = await t.call('GET', record.body.data._links.importTemplate, { key: t.tenants.a.readOnly });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toContain('textiles-EU-2.0.0-import-template.csv');
    const [header, rest] = csv.text.split('\r\n');
    expect(rest).toBe('');
    expect(header!.split(',')).toEqual([
      ...PRODUCT_COLUMNS,
      ...Object.keys(record.body.data.fieldSchema.properties),
    ]);
    const miss = await t.call('GET', '/api/v2/schemas/categories/toys/import-template', {
      key: t.tenants.a.readOnly,
    });
    expect(miss.status).toBe(404);
    expect(miss.body.error.code).toBe('SCHEMA_NOT_FOUND');
  });

  it('is readable with the legacy products:view alias, and refused without a read scope', async () => {
    expect((await t.call('GET', '/api/v2/schemas/categories', { key: legacyKey })).status).toBe(200);
    const denied = await t.call('GET', '/api/v2/schemas/categories', { key: t.tenants.a.noScopes });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({
      code: 'API_SCOPE_DENIED',
      details: { required: 'products:read' },
    });
    expect((await t.call('GET', '/api/v2/schemas/categories')).status).toBe(401);
  });
});
