/**
 * Budgets per client IP for the routes without a credential: the public routes, the credential routes (OAuth
 * token, device enrollment, sign-in, sign-up) and failed attempts. The client is the socket's peer unless a
 * trusted proxy names it in X-Forwarded-For.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { FormClient } from '@dpp/testkit/web';

let t: TestControlPlane | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const start = async (env: Record<string, string>) => {
  t = await startTestControlPlane({ dialect: 'sqlite', env });
  return t;
};
const passport = '/api/v2/public/passport/00000000-0000-4000-8000-000000000000';

describe('per-IP budgets of the routes without a credential', () => {
  it('refuses the public routes over budget with 429 RATE_LIMITED, Retry-After and X-RateLimit-*; never the probes', async () => {
    const cp = await start({ IP_RATE_LIMITS: 'public=3/60' });
    for (let i = 0; i < 3; i++) {
      const r = await cp.call('GET', passport);
      expect(r.status).toBe(404); // unknown passports count too
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
    }
    const over = await cp.call('GET', passport);
    expect(over.status).toBe(429);
    expect(over.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 3 } });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(over.headers.get('x-ratelimit-limit')).toBe('3');
    for (let i = 0; i < 5; i++) expect((await cp.call('GET', '/healthz')).status).toBe(200);
    // An API key has its tenant's budget, not this one.
    expect((await cp.call('GET', '/api/v2/products?limit=1', { key: cp.tenants.a.admin })).status).toBe(200);
  });

  it('reads the client from X-Forwarded-For only when the peer is a trusted proxy', async () => {
    const trusted = await start({ IP_RATE_LIMITS: 'public=1/60' }); // TRUST_PROXY unset: loopback is trusted
    const from = (ip: string) => trusted.call('GET', passport, { headers: { 'X-Forwarded-For': ip } });
    expect((await from('203.0.113.7')).status).toBe(404);
    expect((await from('203.0.113.7')).status).toBe(429);
    expect((await from('198.51.100.9')).status).toBe(404); // another client, its own budget
    await trusted.close();
    t = null;
    const untrusted = await start({ IP_RATE_LIMITS: 'public=1/60', TRUST_PROXY: 'none' });
    const fromU = (ip: string) => untrusted.call('GET', passport, { headers: { 'X-Forwarded-For': ip } });
    expect((await fromU('203.0.113.7')).status).toBe(404);
    expect((await fromU('198.51.100.9')).status).toBe(429); // the header is not believed: same peer
  });

  it('limits the credential routes, and a spent failure budget refuses even the right password', async () => {
    const cp = await start({ IP_RATE_LIMITS: 'credentials=6/60,failures=2/60' });
    const token = () =>
      cp.call('POST', '/api/v2/oauth/token', {
        body: { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'wrong' },
        headers: { 'Idempotency-Key': crypto.randomUUID() },
      });
    expect((await token()).status).toBe(401);
    expect((await token()).status).toBe(401);
    const throttled = await token();
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe('RATE_LIMITED');
    // Sign-in shares the failure budget of this address: spent, the right password waits too, on a page.
    const c = new FormClient(cp.url);
    const refused = await c.post('/signin', { email: 'someone@example.com', password: 'not-it-at-all' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.text).toContain('Too many attempts');
  });

  it('counts sign-ups and sign-ins against the credential budget', async () => {
    const cp = await start({ IP_RATE_LIMITS: 'credentials=2/60' });
    const c = new FormClient(cp.url);
    const signUp = (n: number) =>
      c.post('/signup', { workspaceName: `W${n}`, email: `w${n}@example.com`, password: 'p4ssw0rd-typed' });
    expect((await signUp(1)).status).toBe(303);
    expect((await signUp(2)).status).toBe(303);
    expect((await signUp(3)).status).toBe(429);
  });
});

describe('IP_RATE_LIMITS and TRUST_PROXY', () => {
  it('refuses a malformed value at start, naming the variable', async () => {
    const { loadConfig } = await import('../config/index.js');
    expect(() => loadConfig({ IP_RATE_LIMITS: 'everyone=1/60' })).toThrow(/IP_RATE_LIMITS/);
    expect(() => loadConfig({ TRUST_PROXY: 'my-proxy' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '::1']);
    expect(loadConfig({}).trustProxy).toEqual(['loopback']);
    expect(loadConfig({ TRUST_PROXY: 'none' }).trustProxy).toBe(false);
    expect(loadConfig({ IP_RATE_LIMITS: 'public=5/10' }).ipRateLimits.public).toEqual({
      limit: 5,
      windowSeconds: 10,
    });
  });
});
