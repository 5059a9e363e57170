import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { FormClient, visibleText, type PageResponse } from '@dpp/testkit/web';

const CSP =
  "default-src 'none'; style-src 'self' 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

let seq = 0;
const email = () => `owner${++seq}-${Date.now()}@example.com`;

describe.each(testDialects())('sign-up and sign-in pages (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  it('serves the sign-up form with the security headers and a label on every input', async () => {
    const page = await new FormClient(t.url).get('/signup');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/);
    expect(page.headers.get('content-security-policy')).toBe(CSP);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.text).toMatch(/<meta name="viewport" content="width=device-width, initial-scale=1"/);
    const ids = [...page.text.matchAll(/<input\s+id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(['f-workspaceName', 'f-companySlug', 'f-email', 'f-password', 'f-sandbox']);
    for (const id of ids) expect(page.text).toContain(`for="${id}"`);
    expect(visibleText(page.text)).toContain('Sandbox workspace (30 days)');
  });

  it('sends / to sign-in without a session and to settings with one', async () => {
    const c = new FormClient(t.url);
    expect((await c.get('/')).headers.get('location')).toBe('/signin');
    await c.signUp({ workspaceName: 'Root Redirect', email: email() });
    expect((await c.get('/')).headers.get('location')).toBe('/settings');
    expect((await c.get('/signin')).headers.get('location')).toBe('/settings');
  });

  it('creates a free tenant and its owner, who then signs in with a safe session cookie', async () => {
    const c = new FormClient(t.url);
    const address = email();
    const signedUp = await c.post('/signup', {
      workspaceName: 'Acme Labels',
      email: address,
      password: 'p4ssw0rd-typed',
    });
    expect(signedUp.status).toBe(303);
    expect(signedUp.headers.get('location')).toBe('/signin?notice=signed-up');
    expect(c.cookie).toBeUndefined(); // signing up never signs in: a taken email must answer the same
    const res = await c.post('/signin', { email: address, password: 'p4ssw0rd-typed' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/settings');
    const cookie = res.headers.getSetCookie().find((l) => l.startsWith('dpp_session='));
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).toMatch(/; HttpOnly(;|$)/);
    expect(cookie).toMatch(/; SameSite=Lax(;|$)/);
    expect(cookie).not.toMatch(/Secure/); // only in production
    const settings = await c.get('/settings');
    expect(settings.status).toBe(200);
    const text = visibleText(settings.text);
    expect(text).toContain('Name Acme Labels');
    expect(text).toContain('Tier free');
    expect(text).toContain('Sandbox no');
  });

  it('stores the password as an scrypt hash, never as typed', async () => {
    const address = email();
    await new FormClient(t.url).signUp({
      workspaceName: 'Hash Check',
      email: address,
      password: 'p4ssw0rd-typed',
    });
    const row = await t.cp.store.db
      .selectFrom('users')
      .select(['password_hash', 'role'])
      .where('email', '=', address)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(row.password_hash).not.toContain('p4ssw0rd-typed');
    expect(row.role).toBe('owner');
  });

  it('offers a 30-day sandbox and shows its expiry', async () => {
    const c = new FormClient(t.url);
    await c.signUp({ workspaceName: 'Sandbox Co', email: email(), sandbox: true });
    const text = visibleText((await c.get('/settings')).text);
    const expected = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    expect(text).toContain(`Sandbox yes, expires ${expected}`);
  });

  it('re-renders invalid input with 400, a message by each field, and keeps what was typed but the password', async () => {
    const res = await new FormClient(t.url).post('/signup', {
      workspaceName: 'x',
      email: 'not-an-email<b>',
      password: 'short-pw',
      sandbox: 'on',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(res.text).toContain('id="f-workspaceName-error">Workspace name must be 2 to 100 characters');
    expect(res.text).toContain('id="f-email-error">Enter a valid email address');
    expect(res.text).toContain('id="f-password-error">Password must be at least 10 characters');
    expect(res.text).toContain('value="x"');
    expect(res.text).toContain('value="not-an-email&lt;b&gt;"');
    expect(res.text).not.toContain('short-pw');
    expect(res.text).toMatch(/id="f-sandbox"[^>]* checked/);
    expect(res.text).toMatch(/id="f-email"[^>]*aria-invalid="true"/);
  });

  it('answers a taken email exactly as a new one, changes nothing, and mails the owner instead', async () => {
    const taken = email();
    const fresh = email();
    const signup = (workspaceName: string, address: string, password: string) =>
      new FormClient(t.url).post('/signup', { workspaceName, email: address, password });
    /** What a browser can observe of an answer; only the date and the correlation id may differ. */
    const observed = (res: PageResponse) => {
      const headers = Object.fromEntries(
        // The date, the correlation id and the per-IP budget left differ by request, not by account.
        [...res.headers].filter(
          ([name]) => name !== 'date' && name !== 'x-correlation-id' && name !== 'x-ratelimit-remaining',
        ),
      );
      return { status: res.status, headers, cookies: res.headers.getSetCookie(), body: res.text };
    };
    const owner = () =>
      t.cp.store.db
        .selectFrom('users')
        .select(['id', 'tenant_id', 'password_hash'])
        .where('email', '=', taken)
        .execute();

    const first = await signup('First', taken, 'the owner password');
    const before = await owner();
    const again = await signup('Second', ` ${taken.toUpperCase()} `, 'an intruder password');
    const other = await signup('Third', fresh, 'a third password');

    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/signin?notice=signed-up');
    expect(observed(again)).toEqual(observed(first));
    expect(observed(other)).toEqual(observed(first));

    expect(before).toHaveLength(1);
    expect(await owner()).toEqual(before);
    const second = await t.cp.store.db
      .selectFrom('tenants')
      .select('id')
      .where('name', '=', 'Second')
      .execute();
    expect(second).toHaveLength(0);

    const mail = t.mail.filter((m) => m.to === taken);
    expect(mail.map((m) => m.subject)).toEqual([
      'Your DPP workspace is ready',
      'Someone tried to sign up with your email address',
    ]);
    expect(mail[1]!.text).toMatch(/Nothing was created[\s\S]* https?:\/\/\S+\/signin\n/);
    for (const typed of ['the owner password', 'an intruder password', 'Second']) {
      expect(mail.map((m) => m.text).join('\n')).not.toContain(typed);
    }
    expect(t.mail.filter((m) => m.to === fresh).map((m) => m.subject)).toEqual([
      'Your DPP workspace is ready',
    ]);

    const c = new FormClient(t.url);
    expect((await c.post('/signin', { email: taken, password: 'an intruder password' })).status).toBe(401);
    expect((await c.post('/signin', { email: taken, password: 'the owner password' })).status).toBe(303);
  });

  it('points a sign-up to the sign-in page with one notice, whoever the address belongs to', async () => {
    const page = await new FormClient(t.url).get('/signin?notice=signed-up');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/role="status">Thanks\. We sent a message to the address you entered/);
    const plain = await new FormClient(t.url).get('/signin?notice=%3Cb%3Eanything');
    expect(plain.text).not.toContain('role="status"');
  });

  it.each([
    ['another site as Origin', { origin: 'http://evil.example' }, {}],
    ['no Origin, Referer or Fetch Metadata', { origin: null }, {}],
    ['Origin "null" (a sandboxed or no-referrer page)', { origin: 'null' }, {}],
    ['Sec-Fetch-Site: cross-site', { origin: null }, { 'sec-fetch-site': 'cross-site' }],
  ])('refuses a sign-up posted from %s with 403, creating nothing', async (_label, opts, headers) => {
    const name = `Cross ${++seq}`;
    const body = new URLSearchParams({ workspaceName: name, email: email(), password: 'long enough pw' });
    const res = await fetch(`${t.url}/signup`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(opts.origin ? { origin: opts.origin } : {}),
        ...headers,
      },
      body: body.toString(),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('not sent from this site');
    const rows = await t.cp.store.db.selectFrom('tenants').select('id').where('name', '=', name).execute();
    expect(rows).toHaveLength(0);
  });

  it('accepts Sec-Fetch-Site: same-origin or a same-host Referer in place of Origin', async () => {
    const viaFetchMetadata = await fetch(`${t.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: 'email=nobody%40example.com&password=whatever+pw',
    });
    expect(viaFetchMetadata.status).toBe(401); // reached the password check
    const viaReferer = await fetch(`${t.url}/signin`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', referer: `${t.url}/signin` },
      body: 'email=nobody%40example.com&password=whatever+pw',
    });
    expect(viaReferer.status).toBe(401);
  });

  it('signs in with the right password only, with one message for unknown email and wrong password', async () => {
    const address = email();
    await new FormClient(t.url).signUp({
      workspaceName: 'Sign In Co',
      email: address,
      password: 'the right password',
    });
    const c = new FormClient(t.url);
    const wrong = await c.post('/signin', { email: address, password: 'the wrong password' });
    const unknown = await c.post('/signin', { email: `x${address}`, password: 'the right password' });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.text).toContain('Email or password is incorrect');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    expect(wrong.text).toContain(`value="${address}"`);
    expect(wrong.text).not.toContain('the wrong password');
    const empty = await c.post('/signin', { email: '', password: '' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Enter your email address');
    const ok = await c.post('/signin', {
      email: ` ${address.toUpperCase()} `,
      password: 'the right password',
    });
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/settings');
    expect((await c.get('/settings')).status).toBe(200);
  });

  it('signs out only with the CSRF token, and the old cookie stops working', async () => {
    const c = new FormClient(t.url);
    await c.signUp({ workspaceName: 'Sign Out Co', email: email() });
    const token = await c.csrfToken();
    const oldCookie = c.cookie;
    const refused = await c.post('/signout', {});
    expect(refused.status).toBe(403);
    expect((await c.get('/settings')).status).toBe(200);
    const res = await c.post('/signout', { _csrf: token });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/signin');
    expect(c.cookie).toBeUndefined();
    const stale = new FormClient(t.url);
    stale.cookie = oldCookie;
    const after = await stale.get('/settings');
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/signin');
  });

  it('leaves API paths to the API', async () => {
    const res = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBeNull();
  });
});
