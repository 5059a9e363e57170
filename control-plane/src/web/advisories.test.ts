/**
 * The security advisories page of the settings: publish, publish a new version, withdraw, with the API's
 * checks; a refused form comes back as typed and changes nothing; the feed follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { FormClient, visibleText } from '@dpp/testkit/web';

describe('the security advisories settings page', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect: 'sqlite' });
  });
  afterAll(() => t?.close());

  const fields = {
    title: 'Scanner app leaks session cookie',
    summary: 'The companion app before 3.1 logs the session cookie.',
    severity: 'medium',
    cves: 'CVE-2026-20001',
    affected: 'Companion app | < 3.1\nAurora printer | 2.x | 09506000134352',
    fixed: 'Companion app | 3.1',
    remediationCategory: 'vendor_fix',
    remediationDetails: 'Update the app to 3.1.',
    remediationUrl: '',
    references: 'https://example.com/notice | Vendor notice',
  };

  it('publishes, edits and withdraws an advisory; the public feed follows each step', async () => {
    const c = new FormClient(t.url);
    await c.signUp({ workspaceName: 'Advisory Pages', email: 'adv-pages@example.com' });
    const csrf = await c.csrfToken();
    const feed = async () => {
      const page = await c.get('/settings/advisories');
      const href = /href="([^"]+\/security-advisories)"/.exec(page.text)![1]!;
      return (await (await fetch(new URL(new URL(href).pathname, t.url))).json()) as {
        feed: { entry: { id: string; title: string }[] };
      };
    };
    expect((await feed()).feed.entry).toEqual([]);

    const bad = await c.post('/settings/advisories', { _csrf: csrf, ...fields, cves: 'CVE-1' });
    expect(bad.status).toBe(400);
    expect(visibleText(bad.text)).toContain('CVE ids (#1): must be a CVE id');
    expect(bad.text).toContain('Update the app to 3.1.'); // what was typed comes back
    expect((await feed()).feed.entry).toEqual([]);

    const published = await c.post('/settings/advisories', { _csrf: csrf, ...fields });
    expect(published.status).toBe(303);
    const list = await c.get('/settings/advisories');
    expect(visibleText(list.text)).toContain('Scanner app leaks session cookie');
    const id = /data-advisory-id="([^"]+)"/.exec(list.text)![1]!;
    expect((await feed()).feed.entry).toHaveLength(1);

    const edit = await c.get(`/settings/advisories/${id}`);
    expect(edit.status).toBe(200);
    expect(edit.text).toContain('Aurora printer | 2.x | 09506000134352');
    const noSummary = await c.post(`/settings/advisories/${id}`, {
      _csrf: csrf,
      ...fields,
      severity: 'high',
    });
    expect(noSummary.status).toBe(400);
    expect(visibleText(noSummary.text)).toContain('What changed');
    const updated = await c.post(`/settings/advisories/${id}`, {
      _csrf: csrf,
      ...fields,
      severity: 'high',
      revisionSummary: 'Severity raised',
    });
    expect(updated.status).toBe(303);
    expect(updated.headers.get('location')).toContain('notice=updated');

    expect((await c.post(`/settings/advisories/${id}/withdraw`, { _csrf: csrf, reason: '' })).status).toBe(
      400,
    );
    const withdrawn = await c.post(`/settings/advisories/${id}/withdraw`, {
      _csrf: csrf,
      reason: 'Duplicate of SA-1',
    });
    expect(withdrawn.status).toBe(303);
    expect((await feed()).feed.entry[0]!.title).toMatch(/\(withdrawn\)$/);
    const again = await c.post(`/settings/advisories/${id}`, {
      _csrf: csrf,
      ...fields,
      revisionSummary: 'x',
    });
    expect(again.status).toBe(409);

    // Without the CSRF token nothing is published.
    expect((await c.post('/settings/advisories', fields)).status).toBe(403);
    expect((await feed()).feed.entry).toHaveLength(1);
  });
});
