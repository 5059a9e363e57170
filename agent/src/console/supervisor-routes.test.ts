/**
 * The console's supervisor sign-in and the page it serves: sessions guard attest, fail and re-print, the
 * attestation names the session's supervisor, wrong PINs are limited, and the page comes with a strict CSP.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentError } from '../errors.js';
import type { ManualScan, Supervisor } from '../jobs/index.js';
import { silentLogger } from '../log.js';
import type { ConsoleBackend, ConsoleEventListener } from './backend.js';
import { hashPin } from './pin.js';
import { startConsoleServer, type ConsoleServer } from './server.js';
import { CONSOLE_CSP } from './ui-files.js';

const CHEAP = { N: 1024, r: 8, p: 1 };
const UI_DIR = fileURLToPath(new URL('./ui/', import.meta.url));

/** A backend whose job `job_1` always waits for an attestation; it records what it was asked. */
class Backend implements ConsoleBackend {
  calls: unknown[] = [];
  status() {
    return { device: 'd1' };
  }
  metrics() {
    return '';
  }
  job(ref: string) {
    return ref === 'job_1' ? { jobRef: ref } : null;
  }
  preview() {
    return null;
  }
  currentAttempt(ref: string) {
    return ref === 'job_1' ? 'att_1' : null;
  }
  private known(ref: string) {
    if (ref !== 'job_1') throw new AgentError('NOT_WAITING', 'unknown', { details: { notFound: true } });
  }
  attest(ref: string, supervisor: Supervisor, note?: string) {
    this.known(ref);
    this.calls.push(['attest', ref, supervisor, note]);
  }
  fail(ref: string, reason: string, detail?: string) {
    this.known(ref);
    this.calls.push(['fail', ref, reason, detail]);
  }
  reprint(ref: string) {
    this.known(ref);
    this.calls.push(['reprint', ref]);
  }
  scan(ref: string, input: ManualScan) {
    this.known(ref);
    this.calls.push(['scan', ref, input]);
  }
  subscribe(_l: ConsoleEventListener) {
    return () => undefined;
  }
}

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> | string | null;
}

function client(server: ConsoleServer) {
  return async (method: string, p: string, body?: unknown, token?: string): Promise<Answer> => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(server.url + p, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: type.startsWith('application/json')
        ? (JSON.parse(text) as Record<string, unknown>)
        : text || null,
    };
  };
}

describe('console with supervisors configured', () => {
  let backend: Backend;
  let server: ConsoleServer;
  let call: ReturnType<typeof client>;

  beforeAll(async () => {
    backend = new Backend();
    server = await startConsoleServer({
      backend,
      host: '127.0.0.1',
      port: 0,
      log: silentLogger,
      supervisors: [
        { id: 'sup-ana', name: 'Ana Lima', pinHash: await hashPin('2468', CHEAP) },
        { id: 'sup-bo', name: 'Bo Chen', pinHash: await hashPin('1357', CHEAP) },
      ],
    });
    call = client(server);
  });
  afterAll(() => server.close());

  it('refuses attest, fail and re-print without a session, whatever the body says', async () => {
    for (const [sub, body] of [
      ['attest', { supervisor: { id: 'sup-ana', name: 'Ana Lima' } }],
      ['fail', { reason: 'label_damaged' }],
      ['reprint', {}],
    ] as const) {
      const r = await call('POST', `/api/jobs/job_1/${sub}`, body);
      expect(r.status, sub).toBe(401);
      expect(r.body).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
      expect(r.headers.get('www-authenticate')).toBe('Bearer realm="dpp-console"');
      expect((await call('POST', `/api/jobs/job_1/${sub}`, body, 'x'.repeat(43))).status).toBe(401);
    }
    expect(backend.calls).toEqual([]);
    expect(await call('GET', '/api/session')).toMatchObject({
      status: 200,
      body: { data: { required: true, supervisor: null, expiresAt: null } },
    });
  });

  it('signs in with a PIN; the attestation names the session supervisor, never the body', async () => {
    expect(await call('POST', '/api/session', { pin: '0000' })).toMatchObject({
      status: 401,
      body: { error: { code: 'WRONG_PIN' } },
    });
    expect((await call('POST', '/api/session', { pin: '12' })).status).toBe(400);
    const signIn = await call('POST', '/api/session', { pin: '2468' });
    expect(signIn).toMatchObject({
      status: 201,
      body: { data: { supervisor: { id: 'sup-ana', name: 'Ana Lima' } } },
    });
    const data = (signIn.body as { data: { token: string; expiresAt: string } }).data;
    const token = data.token;
    expect(Date.parse(data.expiresAt) - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(await call('GET', '/api/session', undefined, token)).toMatchObject({
      body: { data: { required: true, supervisor: { id: 'sup-ana' } } },
    });

    const forged = await call('POST', '/api/jobs/job_1/attest', { supervisor: { id: 'sup-bo' } }, token);
    expect(forged).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION_ERROR' } } });
    expect(backend.calls).toEqual([]);
    expect((await call('POST', '/api/jobs/job_1/attest', { note: 'looks fine' }, token)).status).toBe(202);
    expect(backend.calls.at(-1)).toEqual([
      'attest',
      'job_1',
      { id: 'sup-ana', name: 'Ana Lima' },
      'looks fine',
    ]);

    expect((await call('POST', '/api/jobs/job_1/reprint', {}, token)).status).toBe(202);
    expect(backend.calls.at(-1)).toEqual(['reprint', 'job_1']);
    const failed = await call(
      'POST',
      '/api/jobs/job_1/fail',
      { reason: 'label_damaged', detail: 'torn' },
      token,
    );
    expect(failed.status).toBe(202);
    expect(backend.calls.at(-1)).toEqual([
      'fail',
      'job_1',
      'label_damaged',
      'torn; marked failed by supervisor Ana Lima (sup-ana)',
    ]);
    // A scan needs no session: it is data from the label, not a person's word.
    expect((await call('POST', '/api/jobs/job_1/scan', { data: 'https://id.example/01/1' })).status).toBe(
      202,
    );

    expect((await call('DELETE', '/api/session', undefined, token)).status).toBe(204);
    expect((await call('POST', '/api/jobs/job_1/attest', {}, token)).status).toBe(401);
    expect(await call('GET', '/api/session', undefined, token)).toMatchObject({
      body: { data: { supervisor: null } },
    });
  });

  it('limits wrong PINs to five a minute per console (429 with Retry-After)', async () => {
    // The earlier test spent one wrong PIN; four more reach the limit.
    for (let i = 0; i < 4; i++)
      expect((await call('POST', '/api/session', { pin: `900${i}` })).status).toBe(401);
    const limited = await call('POST', '/api/session', { pin: '1357' });
    expect(limited).toMatchObject({ status: 429, body: { error: { code: 'TOO_MANY_ATTEMPTS' } } });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });
});

describe('console without supervisors (development, the agent tests)', () => {
  let backend: Backend;
  let server: ConsoleServer;
  let call: ReturnType<typeof client>;
  beforeAll(async () => {
    backend = new Backend();
    server = await startConsoleServer({ backend, host: '127.0.0.1', port: 0, log: silentLogger });
    call = client(server);
  });
  afterAll(() => server.close());

  it('takes the supervisor from the body and has no sign-in', async () => {
    expect(await call('GET', '/api/session')).toMatchObject({
      body: { data: { required: false, supervisor: null } },
    });
    expect(await call('POST', '/api/session', { pin: '2468' })).toMatchObject({
      status: 409,
      body: { error: { code: 'NO_SUPERVISORS' } },
    });
    expect((await call('POST', '/api/jobs/job_1/attest', { supervisor: { id: 'u7' } })).status).toBe(202);
    expect(backend.calls.at(-1)).toEqual(['attest', 'job_1', { id: 'u7' }, undefined]);
    expect((await call('POST', '/api/jobs/job_1/fail', { reason: 'x' })).status).toBe(202);
    expect(backend.calls.at(-1)).toEqual(['fail', 'job_1', 'x', undefined]);
  });

  it('serves the console page with a strict CSP, and its files only', async () => {
    const page = await call('GET', '/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.body).toContain('<script type="module" src="/ui/app.js"></script>');
    // The page's modules: app.js and every module it imports, transitively, are served as JavaScript.
    const seen = new Set<string>();
    const modules = ['app.js'];
    for (let name = modules.pop(); name !== undefined; name = modules.pop()) {
      if (seen.has(name)) continue;
      seen.add(name);
      const js = await call('GET', `/ui/${name}`);
      expect(js.status, name).toBe(200);
      expect(js.headers.get('content-type'), name).toBe('text/javascript; charset=utf-8');
      for (const m of String(js.body).matchAll(/^import [^;]* from '\.\/([a-z-]+\.js)';$/gm))
        modules.push(m[1]!);
    }
    expect(seen).toEqual(new Set((await readdir(UI_DIR)).filter((f) => f.endsWith('.js'))));
    const sheets = [...String(page.body).matchAll(/<link rel="stylesheet" href="\/ui\/([a-z-]+\.css)"/g)];
    expect(sheets.map((m) => m[1]).sort()).toEqual(
      (await readdir(UI_DIR)).filter((f) => f.endsWith('.css')).sort(),
    );
    for (const [, sheet] of sheets)
      expect((await call('GET', `/ui/${sheet}`)).headers.get('content-type'), sheet).toBe(
        'text/css; charset=utf-8',
      );
    for (const p of [
      '/ui/nope.js',
      '/ui/../server.ts',
      '/ui/%2e%2e/server.ts',
      '/ui/.hidden.js',
      '/ui/sub/app.js',
    ])
      expect((await call('GET', p)).status, p).toBe(404);
    // The API's answers carry the same headers.
    const status = await call('GET', '/api/status');
    expect(status.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(status.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('has no inline script, style or event handler in the page (the CSP would block them)', async () => {
    const html = await readFile(path.join(UI_DIR, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style\b/);
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    for (const file of (await readdir(UI_DIR)).filter((f) => f.endsWith('.js'))) {
      const js = await readFile(path.join(UI_DIR, file), 'utf8');
      expect(js, file).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/,
      );
    }
  });
});

describe('console page folder', () => {
  it('serves the folder it is given, or no page at all', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-ui-'));
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>bundled</title>');
    const custom = await startConsoleServer({
      backend: new Backend(),
      host: '127.0.0.1',
      port: 0,
      log: silentLogger,
      uiDir: dir,
    });
    const none = await startConsoleServer({
      backend: new Backend(),
      host: '127.0.0.1',
      port: 0,
      log: silentLogger,
      uiDir: null,
    });
    try {
      expect(await client(custom)('GET', '/')).toMatchObject({
        status: 200,
        body: expect.stringContaining('bundled'),
      });
      expect((await client(custom)('GET', '/ui/app.js')).status).toBe(404);
      expect((await client(none)('GET', '/')).status).toBe(404);
    } finally {
      await custom.close();
      await none.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
