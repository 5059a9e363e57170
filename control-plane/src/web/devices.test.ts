import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollmentProof, newDeviceKey, startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { FormClient, visibleText } from '@dpp/testkit/web';

describe('settings page: devices and enrollment tokens', () => {
  let t: TestControlPlane;
  let c: FormClient;
  let csrf: string;

  beforeAll(async () => {
    t = await startTestControlPlane();
    c = new FormClient(t.url);
    await c.signUp({ workspaceName: 'Floor Co', email: `floor-${Date.now()}@example.com` });
    csrf = await c.csrfToken();
  });
  afterAll(() => t.close());

  it('creates an enrollment token shown once, which a device then enrolls with', async () => {
    const res = await c.post('/settings/devices/enrollment-tokens', {
      _csrf: csrf,
      label: 'Line 3 PC',
      site: 'Plant <1>',
      printers: 'zebra-1, zebra-2',
      hours: '24',
    });
    expect(res.status).toBe(201);
    const token = /id="new-secret"[^>]*\svalue="(dpp_enr_[^"]+)"/.exec(res.text)?.[1];
    expect(token).toBeDefined();
    expect(res.text).toContain('Plant &lt;1&gt;');
    const key = await newDeviceKey();
    const enrolled = await t.call('POST', '/api/v2/devices/enroll', {
      body: { token, name: 'line-3', publicKeyJwk: key.publicJwk, proof: await enrollmentProof(key, token!) },
    });
    expect(enrolled.status).toBe(201);
    expect(enrolled.body.data.printerNames).toEqual(['zebra-1', 'zebra-2']);
    const page = await c.get('/settings/devices');
    expect(page.text).not.toContain(token!);
    const text = visibleText(page.text);
    expect(text).toContain('line-3');
    expect(text).toContain('used');
  });

  it('refuses a bad printer name, changing nothing', async () => {
    const before = await c.get('/settings/devices');
    const rows = (before.text.match(/<tr>/g) ?? []).length;
    const res = await c.post('/settings/devices/enrollment-tokens', {
      _csrf: csrf,
      printers: 'a/b',
      hours: '24',
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Printer name &quot;a/b&quot; must be 1 to 64 characters');
    expect(((await c.get('/settings/devices')).text.match(/<tr>/g) ?? []).length).toBe(rows);
  });

  it('revokes a device from the page; a second revoke says so', async () => {
    const page = await c.get('/settings/devices');
    const id = /data-device-id="([0-9a-f-]{36})"/.exec(page.text)![1]!;
    const res = await c.post(`/settings/devices/${id}/revoke`, { _csrf: csrf });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/settings/devices?notice=revoked');
    const again = await c.post(`/settings/devices/${id}/revoke`, { _csrf: csrf });
    expect(again.status).toBe(409);
  });

  it('refuses a form without the CSRF token', async () => {
    const res = await c.post('/settings/devices/enrollment-tokens', { hours: '24' });
    expect(res.status).toBe(403);
  });
});
