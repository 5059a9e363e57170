import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentError, isAgentError } from '../errors.js';
import type { ManualScan, Supervisor } from '../jobs/index.js';
import { silentLogger } from '../log.js';
import type { ConsoleBackend, ConsoleEventListener } from './backend.js';
import { startConsoleServer, type ConsoleServer } from './server.js';

/** A backend with one job waiting for an attestation. */
class Backend implements ConsoleBackend {
  listeners = new Set<ConsoleEventListener>();
  calls: unknown[] = [];
  waiting: 'attestation' | 'scan' | null = 'attestation';
  status() {
    return { device: 'd1', printers: [] };
  }
  metrics() {
    return '# TYPE dpp_agent_jobs_finished_total counter\ndpp_agent_jobs_finished_total{printer="zebra-1",step="sealed"} 3\n';
  }
  job(ref: string) {
    return ref === 'job_1' ? { jobRef: ref, attempts: [] } : null;
  }
  preview(ref: string) {
    return ref === 'job_1' ? Buffer.from([0x89, 0x50, 0x4e, 0x47]) : null;
  }
  currentAttempt(ref: string) {
    return ref === 'job_1' ? 'att_2' : null;
  }
  private check(ref: string, kind: 'attestation' | 'scan' | 'any') {
    if (ref !== 'job_1') throw new AgentError('NOT_WAITING', 'unknown', { details: { notFound: true } });
    if (kind !== 'any' && this.waiting !== kind)
      throw new AgentError('NOT_WAITING', `not waiting for ${kind}`);
  }
  attest(ref: string, supervisor: Supervisor, note?: string) {
    this.check(ref, 'attestation');
    this.calls.push(['attest', ref, supervisor, note]);
  }
  fail(ref: string, reason: string, detail?: string) {
    this.check(ref, 'any');
    this.calls.push(['fail', ref, reason, detail]);
  }
  reprint(ref: string) {
    this.check(ref, 'attestation');
    this.calls.push(['reprint', ref]);
  }
  scan(ref: string, input: ManualScan) {
    this.check(ref, 'scan');
    this.calls.push(['scan', ref, input]);
  }
  subscribe(l: ConsoleEventListener) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}

let backend: Backend;
let server: ConsoleServer;
beforeAll(async () => {
  backend = new Backend();
  server = await startConsoleServer({
    backend,
    host: '127.0.0.1',
    port: 0,
    log: silentLogger,
    keepAliveMs: 50,
  });
});
afterAll(() => server.close());

async function call(method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(server.url + p, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const type = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    type,
    body: type.startsWith('application/json') ? await res.json() : Buffer.from(await res.arrayBuffer()),
  };
}

describe('console server', () => {
  it('serves the status, a job and its preview, and 404 for the rest', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await call('GET', '/api/status')).toMatchObject({ status: 200, body: { data: { device: 'd1' } } });
    expect(await call('GET', '/api/jobs/job_1')).toMatchObject({
      status: 200,
      body: { data: { jobRef: 'job_1' } },
    });
    const png = await call('GET', '/api/jobs/job_1/preview.png');
    expect(png.type).toBe('image/png');
    expect(png.body).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    expect((await call('GET', '/api/jobs/job_2')).status).toBe(404);
    expect((await call('GET', '/api/jobs/job_2/preview.png')).status).toBe(404);
    expect((await call('GET', '/nope')).status).toBe(404);
    expect((await call('DELETE', '/api/jobs/job_1')).status).toBe(405);
  });

  it("serves the line's figures as Prometheus text, for a scraper on this machine", async () => {
    const m = await call('GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect((m.body as Buffer).toString()).toBe(backend.metrics());
    expect((await call('POST', '/metrics', {})).status).toBe(405);
  });

  it('takes a supervisor attestation, a failure and a reprint, validating each', async () => {
    expect(
      await call('POST', '/api/jobs/job_1/attest', { supervisor: { id: 'u7', name: 'Ana' } }),
    ).toMatchObject({
      status: 202,
      body: { data: { accepted: 'attestation' } },
    });
    expect(backend.calls.at(-1)).toEqual(['attest', 'job_1', { id: 'u7', name: 'Ana' }, undefined]);
    expect(await call('POST', '/api/jobs/job_1/attest', { supervisor: {} })).toMatchObject({
      status: 400,
      body: { error: { code: 'VALIDATION_ERROR' } },
    });
    expect((await call('POST', '/api/jobs/job_1/fail', { reason: 'label jammed' })).status).toBe(202);
    expect(backend.calls.at(-1)).toEqual(['fail', 'job_1', 'label jammed', undefined]);
    expect((await call('POST', '/api/jobs/job_1/reprint', {})).status).toBe(202);
    expect(await call('POST', '/api/jobs/job_1/scan', { data: 'https://x' })).toMatchObject({
      status: 409,
      body: { error: { code: 'NOT_WAITING' } },
    });
    expect((await call('POST', '/api/jobs/job_9/attest', { supervisor: { id: 'u' } })).status).toBe(404);
    expect((await call('POST', '/api/jobs/job_1/fail', 'not json')).status).toBe(400);
  });

  it("takes a scan with the label's other symbols, GS1 ones typed in their (01)… form sent on raw", async () => {
    backend.waiting = 'scan';
    try {
      const link = 'https://id.example.com/01/09506000134352/21/AB7';
      const epc = '3674257BF7194E59B2C2BF100000000000000000000000000000';
      expect(
        await call('POST', '/api/jobs/job_1/scan', {
          data: link,
          symbols: [
            { aimId: ']d1', data: link },
            { aimId: ']C1', data: '(01)09506000134352(21)AB7' },
            { aimId: ']d2', data: '010950600013435221AB7' },
          ],
          epc: epc.toLowerCase(),
        }),
      ).toMatchObject({ status: 202, body: { data: { accepted: 'scan' } } });
      expect(backend.calls.at(-1)).toEqual([
        'scan',
        'job_1',
        {
          data: link,
          symbols: [
            { aimId: ']d1', data: link },
            { aimId: ']C1', data: '010950600013435221AB7' },
            { aimId: ']d2', data: '010950600013435221AB7' },
          ],
          epc,
        },
      ]);
      const before = backend.calls.length;
      for (const bad of [
        { data: link, symbols: [{ aimId: ']C1', data: '(01)0950600013435(21)AB7' }] },
        { data: link, symbols: [{ aimId: 'd2', data: '(01)09506000134352(21)AB7' }] },
        { data: link, epc: epc.slice(0, 50) },
      ]) {
        expect(await call('POST', '/api/jobs/job_1/scan', bad)).toMatchObject({
          status: 400,
          body: { error: { code: 'VALIDATION_ERROR' } },
        });
      }
      expect(backend.calls.length).toBe(before);
    } finally {
      backend.waiting = 'attestation';
    }
  });

  it('refuses an action on an attempt the job has left with 409 ATTEMPT_CHANGED, and asks nothing of the agent', async () => {
    const before = backend.calls.length;
    for (const [action, body] of [
      ['attest', { supervisor: { id: 'u7' }, attemptId: 'att_1' }],
      ['fail', { reason: 'label_unreadable', attemptId: 'att_1' }],
      ['reprint', { attemptId: 'att_1' }],
    ] as const) {
      expect(await call('POST', `/api/jobs/job_1/${action}`, body)).toMatchObject({
        status: 409,
        body: { error: { code: 'ATTEMPT_CHANGED', message: expect.stringContaining('att_2') } },
      });
    }
    expect(backend.calls.length).toBe(before);
    expect((await call('POST', '/api/jobs/job_1/reprint', { attemptId: 'att_2', extra: 1 })).status).toBe(
      400,
    );
    expect(
      (await call('POST', '/api/jobs/job_1/attest', { supervisor: { id: 'u7' }, attemptId: 'att_2' })).status,
    ).toBe(202);
    expect(backend.calls.at(-1)).toEqual(['attest', 'job_1', { id: 'u7' }, undefined]);
  });

  it('refuses requests a web page could forge: no JSON content type, a foreign Host', async () => {
    const form = await call('POST', '/api/jobs/job_1/fail', 'reason=x', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(server.url);
      const req = request(
        { host: u.hostname, port: u.port, path: '/api/status', headers: { host: 'evil.example:80' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('streams every state change as server-sent events', async () => {
    const ac = new AbortController();
    const res = await fetch(`${server.url}/api/events`, { signal: ac.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    const until = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    };
    await until(/event: status\ndata: \{"device":"d1"/);
    await expect.poll(() => backend.listeners.size).toBe(1);
    for (const l of backend.listeners) l('job', { jobRef: 'job_1', step: 'sealed' });
    await until(/event: job\ndata: \{"jobRef":"job_1","step":"sealed"\}\n\n/);
    await until(/: ping/);
    ac.abort();
    await expect.poll(() => backend.listeners.size).toBe(0);
  });

  it('binds to loopback only', async () => {
    await expect(
      startConsoleServer({ backend, host: '0.0.0.0', port: 0, log: silentLogger }),
    ).rejects.toSatisfy((e) => isAgentError(e, 'CONFIG_INVALID'));
  });
});
