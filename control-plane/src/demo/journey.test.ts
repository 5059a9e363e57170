import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpTransport, httpCaller, keepAliveTransport } from './journey.js';

/**
 * A server on 127.0.0.1 that answers what it was sent, and drops the connection of a request whose path says so
 * (the first time it is asked for): what a client sees when a kept-alive connection is closed under it.
 */
let server: http.Server;
let base: string;
const dropped = new Set<string>();
const received: { method: string; url: string; authorization?: string; type?: string; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url!;
      if (url.startsWith('/drop') && !dropped.has(`${req.method} ${url}`)) {
        dropped.add(`${req.method} ${url}`);
        return void req.socket.destroy();
      }
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({
        method: req.method!,
        url,
        authorization: req.headers.authorization,
        type: req.headers['content-type'],
        body,
      });
      if (url === '/empty') return void res.writeHead(204).end();
      res.writeHead(201, { 'content-type': 'application/json', 'x-seen': 'yes' });
      res.end(JSON.stringify({ method: req.method, body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Each transport, and the word its calls' paths carry (so the server's records tell them apart). */
const transports: [string, string, () => HttpTransport | undefined][] = [
  ['fetch', 'fetch', () => undefined],
  ['node:http on kept-alive connections', 'node', () => keepAliveTransport()],
];

describe.each(transports)('httpCaller over %s', (_, name, transport) => {
  it('sends the bearer key and the body as JSON, and answers the status, headers, the body parsed and its text', async () => {
    const call = httpCaller(base, transport());
    const created = await call('POST', `/things?via=${name}`, { key: 'k', body: { name: 'x' } });
    expect(created).toMatchObject({
      status: 201,
      body: { method: 'POST', body: '{"name":"x"}' },
      text: '{"method":"POST","body":"{\\"name\\":\\"x\\"}"}',
    });
    expect(created.headers.get('x-seen')).toBe('yes');
    expect(received.find((r) => r.url === `/things?via=${name}`)).toEqual({
      method: 'POST',
      url: `/things?via=${name}`,
      authorization: 'Bearer k',
      type: 'application/json',
      body: '{"name":"x"}',
    });
    expect(await call('GET', '/empty')).toMatchObject({ status: 204, body: undefined, text: '' });
  });

  it('sends a call again once when its connection was dropped and sending it again is safe', async () => {
    const call = httpCaller(base, transport());
    // A GET, and a POST with an Idempotency-Key: sent again.
    expect((await call('GET', `/drop/get?via=${name}`)).status).toBe(201);
    const keyed = await call('POST', `/drop/keyed?via=${name}`, {
      headers: { 'Idempotency-Key': 'a' },
      body: {},
    });
    expect(keyed.status).toBe(201);
    // A POST without one is not: it may have been done.
    await expect(call('POST', `/drop/unkeyed?via=${name}`, { body: {} })).rejects.toThrow();
    expect(received.some((r) => r.url === `/drop/unkeyed?via=${name}`)).toBe(false);
  });
});
