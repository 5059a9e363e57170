/**
 * Security advisories: a workspace publishes, updates and withdraws them through the API (scope
 * advisories:manage); anyone reads them in the public feed under the company slug, as ROLIE plus one CSAF 2.0
 * document each, checked by the BSI CSAF validator (schema and every mandatory test). The feed fails closed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { csafProblems } from '@dpp/testkit/csaf';

const advisory = (over: Record<string, unknown> = {}) => ({
  title: 'Label printer firmware accepts unsigned updates',
  summary:
    'Firmware before 2.4.1 of the Aurora label printer installs update images without checking their signature.',
  severity: 'high',
  cves: ['CVE-2026-10001'],
  affectedProducts: [{ name: 'Aurora label printer', version: '< 2.4.1', gtin: '09506000134352' }],
  fixedProducts: [{ name: 'Aurora label printer', version: '2.4.1' }],
  remediation: {
    category: 'vendor_fix',
    details: 'Install firmware 2.4.1.',
    url: 'https://example.com/firmware/2.4.1',
  },
  references: [{ url: 'https://example.com/psirt/2026-1', summary: 'Vendor notice' }],
  ...over,
});

describe.each(testDialects())('security advisories (%s)', (dialect) => {
  let t: TestControlPlane;
  let slug: string;
  const key = () => t.tenants.a.admin;
  const feedPath = () => `/api/v2/public/companies/${slug}/security-advisories`;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    const row = await t.cp.store.db
      .selectFrom('tenants')
      .select('slug')
      .where('id', '=', t.tenants.a.id)
      .executeTakeFirstOrThrow();
    slug = row.slug!;
  });
  afterAll(() => t?.close());

  it('publishes one: 201 with its tracking id, listed in the feed, served as a valid CSAF 2.0 document', async () => {
    const r = await t.call('POST', '/api/v2/security-advisories', { key: key(), body: advisory() });
    expect(r.status, r.text).toBe(201);
    const a = r.body.data;
    expect(a).toMatchObject({ state: 'published', version: 1, severity: 'high', cves: ['CVE-2026-10001'] });
    expect(a.trackingId).toMatch(new RegExp(`^${slug.toUpperCase()}-SA-\\d{4}-\\d{4}$`));
    expect(a.revisions).toEqual([{ version: 1, date: a.initialReleaseDate, summary: 'Initial publication' }]);

    const feed = await t.call('GET', feedPath());
    expect(feed.status, feed.text).toBe(200);
    expect(feed.headers.get('access-control-allow-origin')).toBe('*');
    const entry = feed.body.feed.entry.find((e: { id: string }) => e.id === a.trackingId);
    expect(entry).toMatchObject({ title: a.title, format: { version: '2.0' } });
    expect(entry.content.src).toBe(a.csafUrl);

    const doc = await t.call('GET', new URL(a.csafUrl).pathname);
    expect(doc.status, doc.text).toBe(200);
    expect(doc.body.document).toMatchObject({
      category: 'csaf_security_advisory',
      csaf_version: '2.0',
      tracking: { id: a.trackingId, version: '1', status: 'final' },
    });
    expect(doc.body.vulnerabilities[0].cve).toBe('CVE-2026-10001');
    expect(await csafProblems(doc.body)).toEqual([]);
  });

  it('updates one as a new version with its revision; an update that changes nothing makes none', async () => {
    const a = (
      await t.call('POST', '/api/v2/security-advisories', { key: key(), body: advisory({ cves: [] }) })
    ).body.data;
    const patched = await t.call('PATCH', `/api/v2/security-advisories/${a.id}`, {
      key: key(),
      body: {
        severity: 'critical',
        cves: ['CVE-2026-10002', 'CVE-2026-10003'],
        revisionSummary: 'CVEs assigned',
      },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({ version: 2, severity: 'critical', title: a.title });
    expect(patched.body.data.revisions.map((r: { summary: string }) => r.summary)).toEqual([
      'Initial publication',
      'CVEs assigned',
    ]);
    const same = await t.call('PATCH', `/api/v2/security-advisories/${a.id}`, {
      key: key(),
      body: { severity: 'critical', revisionSummary: 'nothing really' },
    });
    expect(same.body.data.version).toBe(2);
    const doc = await t.call('GET', new URL(a.csafUrl).pathname);
    expect(doc.body.document.tracking).toMatchObject({ version: '2' });
    expect(doc.body.document.tracking.revision_history).toHaveLength(2);
    expect(doc.body.vulnerabilities.map((v: { cve: string }) => v.cve)).toEqual([
      'CVE-2026-10002',
      'CVE-2026-10003',
    ]);
    expect(await csafProblems(doc.body)).toEqual([]);
  });

  it('withdraws one: a last version saying why, still in the feed; then final (409 INVALID_TRANSITION)', async () => {
    const a = (await t.call('POST', '/api/v2/security-advisories', { key: key(), body: advisory() })).body
      .data;
    const w = await t.call('POST', `/api/v2/security-advisories/${a.id}/withdraw`, {
      key: key(),
      body: { reason: 'The product named was never affected' },
    });
    expect(w.status, w.text).toBe(200);
    expect(w.body.data).toMatchObject({
      state: 'withdrawn',
      version: 2,
      withdrawalReason: 'The product named was never affected',
    });
    const again = await t.call('POST', `/api/v2/security-advisories/${a.id}/withdraw`, {
      key: key(),
      body: { reason: 'twice' },
    });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({
      version: 2,
      withdrawalReason: 'The product named was never affected',
    });
    const edit = await t.call('PATCH', `/api/v2/security-advisories/${a.id}`, {
      key: key(),
      body: { title: 'x', revisionSummary: 'x' },
    });
    expect(edit.status).toBe(409);
    expect(edit.body.error.code).toBe('INVALID_TRANSITION');

    const entry = (await t.call('GET', feedPath())).body.feed.entry.find(
      (e: { id: string }) => e.id === a.trackingId,
    );
    expect(entry.title).toMatch(/\(withdrawn\)$/);
    const doc = (await t.call('GET', new URL(a.csafUrl).pathname)).body;
    expect(doc.document.tracking.revision_history.at(-1).summary).toBe(
      'Withdrawn: The product named was never affected',
    );
    expect(doc.document.notes.map((n: { title: string }) => n.title)).toContain('Withdrawn');
    expect(await csafProblems(doc)).toEqual([]);
  });

  it('refuses bad input with 400 VALIDATION_ERROR naming the field, and publishes nothing', async () => {
    const count = async () =>
      (await t.call('GET', '/api/v2/security-advisories?limit=100', { key: key() })).body.data.length;
    const before = await count();
    for (const [body, field] of [
      [advisory({ cves: ['CVE-26-1'] }), 'cves[0]'],
      [advisory({ affectedProducts: [] }), 'affectedProducts'],
      [advisory({ severity: 'urgent' }), 'severity'],
      [advisory({ remediation: { category: 'pray', details: 'x' } }), 'remediation.category'],
      [advisory({ references: [{ url: 'javascript:alert(1)', summary: 'x' }] }), 'references[0].url'],
      [advisory({ extra: true }), 'extra'],
    ] as const) {
      const r = await t.call('POST', '/api/v2/security-advisories', { key: key(), body });
      expect(r.status, `${field}: ${r.text}`).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(r.body.error.details)).toContain(field);
    }
    expect(await count()).toBe(before);
  });

  it('keeps advisories to their workspace and their scope', async () => {
    const a = (await t.call('POST', '/api/v2/security-advisories', { key: key(), body: advisory() })).body
      .data;
    const other = await t.call('GET', `/api/v2/security-advisories/${a.id}`, { key: t.tenants.b.admin });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('ADVISORY_NOT_FOUND');
    const denied = await t.call('GET', '/api/v2/security-advisories', { key: t.tenants.a.readOnly });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({
      code: 'API_SCOPE_DENIED',
      details: { required: 'advisories:manage' },
    });
  });

  it('serves an empty feed for a company with none, 404 COMPANY_NOT_FOUND for an unknown slug, CORS on both', async () => {
    const b = await t.cp.store.db
      .selectFrom('tenants')
      .select('slug')
      .where('id', '=', t.tenants.b.id)
      .executeTakeFirstOrThrow();
    const empty = await t.call('GET', `/api/v2/public/companies/${b.slug}/security-advisories`);
    expect(empty.status).toBe(200);
    expect(empty.body.feed.entry).toEqual([]);
    const unknown = await t.call('GET', '/api/v2/public/companies/no-such-company-here/security-advisories');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('COMPANY_NOT_FOUND');
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
    const doc = await t.call('GET', `${feedPath()}/NOPE-SA-2026-9999`);
    expect(doc.status).toBe(404);
    expect(doc.body.error.code).toBe('ADVISORY_NOT_FOUND');
    const preflight = await t.call('OPTIONS', feedPath(), {
      headers: { Origin: 'https://scanner.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
  });
});

describe('the advisory feed fails closed and is limited per client IP', () => {
  let t: TestControlPlane | null = null;
  afterAll(() => t?.close());

  it('answers 60 a minute per IP by default: 429 RATE_LIMITED with its headers after', async () => {
    t = await startTestControlPlane({ dialect: 'sqlite', env: { IP_RATE_LIMITS: 'advisories=60/60' } });
    const { slug } = await t.cp.store.db
      .selectFrom('tenants')
      .select('slug')
      .where('id', '=', t.tenants.a.id)
      .executeTakeFirstOrThrow();
    const path = `/api/v2/public/companies/${slug}/security-advisories`;
    for (let i = 0; i < 60; i++) {
      const r = await t.call('GET', path);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(59 - i));
    }
    const over = await t.call('GET', path);
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('RATE_LIMITED');
    expect(over.headers.get('x-ratelimit-limit')).toBe('60');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('access-control-allow-origin')).toBe('*');
    // Another client behind the trusted proxy has its own budget.
    expect((await t.call('GET', path, { headers: { 'X-Forwarded-For': '198.51.100.4' } })).status).toBe(200);
  });

  it('answers 503 SECURITY_ADVISORY_FEED_UNAVAILABLE, never a partial list, when the store fails mid-read', async () => {
    await t?.close();
    t = await startTestControlPlane({ dialect: 'sqlite' });
    const key = t.tenants.a.admin;
    const published = await t.call('POST', '/api/v2/security-advisories', { key, body: advisory() });
    expect(published.status).toBe(201);
    const doc = new URL(published.body.data.csafUrl).pathname;
    const feed = doc.slice(0, doc.lastIndexOf('/'));
    expect((await t.call('GET', feed)).status).toBe(200);
    // The advisories still read, their revision histories no longer do.
    await t.cp.store.db.schema.alterTable('security_advisory_revisions').renameTo('revisions_gone').execute();
    for (const path of [feed, doc]) {
      const r = await t.call('GET', path);
      expect(r.status, r.text).toBe(503);
      expect(r.body.error.code).toBe('SECURITY_ADVISORY_FEED_UNAVAILABLE');
      expect(r.headers.get('retry-after')).toBe('30');
      expect(r.body.feed).toBeUndefined();
    }
  });
});
