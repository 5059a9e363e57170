import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { FormClient, visibleText, type PageResponse } from '@dpp/testkit/web';

let seq = 0;

function secretOf(page: PageResponse): string {
  const m = /id="new-secret"[^>]*\svalue="([^"]+)"/.exec(page.text);
  if (!m?.[1]) throw new Error(`no secret on the page (status ${page.status})`);
  return m[1];
}

function keyIdOf(page: PageResponse): string {
  const m = /Key ID: <code>([0-9a-f-]{36})<\/code>/.exec(page.text);
  if (!m?.[1]) throw new Error('no key id on the page');
  return m[1];
}

function headersText(res: PageResponse): string {
  return [...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
}

describe.each(testDialects())('settings page: API keys (%s)', (dialect) => {
  let t: TestControlPlane;
  let c: FormClient;
  let csrf: string;

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    c = new FormClient(t.url);
    await c.signUp({ workspaceName: 'Key Owner <&> "Co"', email: `keys-${Date.now()}@example.com` });
    csrf = await c.csrfToken();
  });
  afterAll(() => t.close());

  async function createKey(name: string, scopes: string[]): Promise<PageResponse> {
    return c.post('/settings/api-keys', { _csrf: csrf, name, scopes });
  }

  it('sends a signed-out browser to sign in', async () => {
    const res = await new FormClient(t.url).get('/settings');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/signin');
  });

  it('offers one checkbox per grantable scope with its description, plus all scopes', async () => {
    const page = await c.get('/settings');
    const values = [...page.text.matchAll(/name="scopes" value="([^"]+)"/g)].map((m) => m[1]);
    expect(values[0]).toBe('*');
    expect(values).toContain('keys:manage');
    expect(values).toContain('products:read');
    expect(values).not.toContain('aidc:device');
    expect(visibleText(page.text)).toContain('keys:manage List, rotate and revoke API keys');
    expect(page.text).toContain('<label class="check" for="scope-keys-manage">');
  });

  it('escapes what users typed wherever it is shown', async () => {
    const res = await createKey('<img src=x onerror=alert(1)>', ['products:read']);
    expect(res.status).toBe(201);
    expect(res.text).not.toContain('<img src=x');
    expect(res.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(res.text).toContain('Key Owner &lt;&amp;&gt; &quot;Co&quot;');
    expect(res.text).not.toContain('Key Owner <&>');
  });

  it('creates a key with the chosen scopes and shows its secret once, in the POST response only', async () => {
    const res = await createKey('ERP integration', ['keys:manage', 'products:read']);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    const secret = secretOf(res);
    expect(secret).toMatch(/^dpp_sk_[A-Za-z0-9_-]{43}$/);
    expect(headersText(res)).not.toContain(secret);
    // The copy button's script runs by nonce; the rest of the policy is unchanged.
    const nonce = /<script nonce="([^"]+)">/.exec(res.text)?.[1];
    expect(res.headers.get('content-security-policy')).toContain(`script-src 'nonce-${nonce}'`);
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none';/);

    const listed = await t.call('GET', '/api/v2/api-keys', { key: secret });
    expect(listed.status).toBe(200);
    const key = listed.body.data.find((k: { id: string }) => k.id === keyIdOf(res));
    expect(key).toMatchObject({ name: 'ERP integration', scopes: ['keys:manage', 'products:read'] });

    const again = await c.get('/settings');
    expect(again.text).not.toContain(secret);
    expect(again.text).not.toContain('<script');
    expect(visibleText(again.text)).toMatch(/ERP integration dpp_sk_.{4}… keys:manage , products:read/);
    const row = await t.cp.store.db
      .selectFrom('api_keys')
      .select('secret_hash')
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stores "*" alone when all scopes is ticked with others', async () => {
    const res = await createKey('Everything', ['*', 'products:read']);
    expect(res.status).toBe(201);
    const me = await t.call('GET', `/api/v2/api-keys/${keyIdOf(res)}`, { key: secretOf(res) });
    expect(me.body.data.scopes).toEqual(['*']);
  });

  it('re-renders the create form with 400, field messages and the typed values', async () => {
    const before = (await t.cp.store.db.selectFrom('api_keys').select('id').execute()).length;
    const noName = await createKey('   ', ['products:read', 'dpp:read']);
    expect(noName.status).toBe(400);
    expect(noName.text).toContain('id="f-name-error">Enter a name for the key');
    expect(noName.text).toMatch(/id="scope-products-read"[^>]* checked/);
    expect(noName.text).toMatch(/id="scope-dpp-read"[^>]* checked/);
    expect(noName.text).not.toMatch(/id="scope-keys-manage"[^>]* checked/);
    const noScopes = await createKey('Scopeless', []);
    expect(noScopes.status).toBe(400);
    expect(noScopes.text).toContain('Choose at least one scope');
    expect(noScopes.text).toContain('value="Scopeless"');
    const unknown = await createKey('Bad scope', ['aidc:device', '<x>']);
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Unknown scope: aidc:device, &lt;x&gt;');
    expect(noName.text + noScopes.text + unknown.text).not.toContain('id="new-secret"');
    const after = (await t.cp.store.db.selectFrom('api_keys').select('id').execute()).length;
    expect(after).toBe(before);
  });

  it.each([
    ['no token', {}],
    ['a wrong token', { _csrf: 'not-the-token' }],
    ['a token one character short', { _csrf: 'x' }],
  ])('refuses a POST with %s: 403 and nothing created', async (_label, fields) => {
    const name = `csrf-${++seq}`;
    const res = await c.post('/settings/api-keys', { ...fields, name, scopes: ['products:read'] });
    expect(res.status).toBe(403);
    expect(res.text).toContain('did not carry a valid security token');
    const rows = await t.cp.store.db.selectFrom('api_keys').select('id').where('name', '=', name).execute();
    expect(rows).toHaveLength(0);
  });

  it("refuses another session's CSRF token", async () => {
    const other = new FormClient(t.url);
    await other.signUp({ workspaceName: 'Other', email: `other-${Date.now()}@example.com` });
    const res = await c.post('/settings/api-keys', {
      _csrf: await other.csrfToken(),
      name: 'cross',
      scopes: ['products:read'],
    });
    expect(res.status).toBe(403);
  });

  it('rotates a key: new id and secret shown once, the old secret gets 401', async () => {
    const created = await createKey('Rotating', ['keys:manage']);
    const oldId = keyIdOf(created);
    const oldSecret = secretOf(created);
    const res = await c.post(`/settings/api-keys/${oldId}/rotate`, { _csrf: csrf });
    expect(res.status).toBe(201);
    const newSecret = secretOf(res);
    expect(keyIdOf(res)).not.toBe(oldId);
    expect(headersText(res)).not.toContain(newSecret);
    expect(visibleText(res.text)).toContain('The old key was revoked');
    expect((await t.call('GET', '/api/v2/api-keys', { key: oldSecret })).status).toBe(401);
    expect((await t.call('GET', '/api/v2/api-keys', { key: newSecret })).status).toBe(200);
    const again = await c.post(`/settings/api-keys/${oldId}/rotate`, { _csrf: csrf });
    expect(again.status).toBe(409);
    expect(again.text).not.toContain('id="new-secret"');
  });

  it('revokes a key with a redirect that carries no secret; the second revoke is 409 and changes nothing', async () => {
    const created = await createKey('To revoke', ['keys:manage']);
    const id = keyIdOf(created);
    const secret = secretOf(created);
    const first = await c.post(`/settings/api-keys/${id}/revoke`, { _csrf: csrf });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/settings?notice=revoked');
    expect(headersText(first)).not.toContain(secret);
    expect(visibleText((await c.get(first.headers.get('location') ?? '')).text)).toContain(
      'The key was revoked',
    );
    const before = await t.cp.store.db
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', id)
      .execute();

    const second = await c.post(`/settings/api-keys/${id}/revoke`, { _csrf: csrf });
    expect(second.status).toBe(409);
    expect(visibleText(second.text)).toContain('This API key is already revoked');
    const after = await t.cp.store.db
      .selectFrom('api_keys')
      .select('revoked_at')
      .where('id', '=', id)
      .execute();
    expect(after).toEqual(before);
    expect(before[0]?.revoked_at).not.toBeNull();
    expect((await t.call('GET', '/api/v2/api-keys', { key: secret })).status).toBe(401);
  });

  it("answers 404 for another tenant's key or a malformed id, and leaves it alone", async () => {
    const listed = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.admin });
    const foreign = listed.body.data[0].id as string;
    for (const path of [`/settings/api-keys/${foreign}/revoke`, `/settings/api-keys/${foreign}/rotate`]) {
      const res = await c.post(path, { _csrf: csrf });
      expect(res.status).toBe(404);
      expect(res.text).toContain('There is no such API key in this workspace');
    }
    expect((await c.post('/settings/api-keys/not-a-uuid/revoke', { _csrf: csrf })).status).toBe(404);
    expect((await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.admin })).status).toBe(200);
  });

  it('refuses a form larger than 20 kB with a 413 page', async () => {
    const res = await c.post('/settings/api-keys', { _csrf: csrf, name: 'x'.repeat(25_000), scopes: ['*'] });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });
});
