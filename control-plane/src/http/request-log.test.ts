import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, type Logger } from '../logging/logger.js';
import { correlationId } from './correlation.js';
import { errorHandler } from './errors.js';
import { bindRequestLog, requestLog, requestLogger } from './request-log.js';

/** An app with the request log, a step that binds the tenant and principal, and routes that log or do not. */
async function serve(log: Logger): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.use(correlationId());
  app.use(requestLog(log));
  app.use((req, _res, next) => {
    bindRequestLog(req, { tenant: 't-1', principal: 'api_key:k-1' });
    next();
  });
  app.get('/quiet', (req, res) => {
    Object.assign(req, { routePath: '/quiet' });
    res.json({ ok: true });
  });
  app.get('/chatty', (req, res) => {
    Object.assign(req, { routePath: '/chatty' });
    requestLogger(req)!.warn({ step: 'inside' }, 'handler line');
    res.json({ ok: true });
  });
  app.get('/broken', (req) => {
    Object.assign(req, { routePath: '/broken' });
    throw new Error('the database went away');
  });
  app.use(errorHandler());
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('the request log', () => {
  let close = async () => {};
  afterEach(() => close());

  const capture = (level: string) => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger({
      level,
      destination: { write: (l: string) => void lines.push(JSON.parse(l)) },
    });
    return { log, lines };
  };
  /** Lets the 'finish' listener run after the client has its answer. */
  const settle = () => new Promise((r) => setTimeout(r, 20));

  it('writes one line per request with the correlation id, the bound tenant and principal, and the outcome', async () => {
    const { log, lines } = capture('info');
    const child = vi.spyOn(log, 'child');
    const server = await serve(log);
    close = server.close;
    const res = await fetch(`${server.url}/quiet`, { headers: { 'x-correlation-id': 'corr-1' } });
    expect(res.status).toBe(200);
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request',
      module: 'http',
      correlationId: 'corr-1',
      tenant: 't-1',
      principal: 'api_key:k-1',
      method: 'GET',
      route: '/quiet',
      path: '/quiet',
      status: 200,
    });
    // Nothing but the line was logged: no child logger was made for the request.
    expect(child).not.toHaveBeenCalled();
  });

  it("gives a handler's own lines the same fields, and its request line still goes out", async () => {
    const { log, lines } = capture('info');
    const server = await serve(log);
    close = server.close;
    await fetch(`${server.url}/chatty`, { headers: { 'x-correlation-id': 'corr-2' } });
    await settle();
    expect(lines.map((l) => l.msg)).toEqual(['handler line', 'request']);
    for (const line of lines)
      expect(line).toMatchObject({
        module: 'http',
        correlationId: 'corr-2',
        tenant: 't-1',
        principal: 'api_key:k-1',
      });
    expect(lines[0]).toMatchObject({ step: 'inside', level: 40 });
    expect(lines[1]).toMatchObject({ route: '/chatty', status: 200 });
  });

  it("logs a failure the client sees as 500 with the request's fields, then its request line", async () => {
    const { log, lines } = capture('info');
    const server = await serve(log);
    close = server.close;
    const res = await fetch(`${server.url}/broken`, { headers: { 'x-correlation-id': 'corr-3' } });
    expect(res.status).toBe(500);
    await settle();
    expect(lines.map((l) => l.msg)).toEqual(['request failed', 'request']);
    expect(lines[0]).toMatchObject({
      level: 50,
      module: 'http',
      correlationId: 'corr-3',
      tenant: 't-1',
      err: { message: 'the database went away' },
    });
    expect(lines[1]).toMatchObject({ level: 50, route: '/broken', status: 500 });
  });

  it('writes nothing below its level', async () => {
    const { log, lines } = capture('warn');
    const server = await serve(log);
    close = server.close;
    await fetch(`${server.url}/quiet`);
    await settle();
    expect(lines).toEqual([]);
  });
});
