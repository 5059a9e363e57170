import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';

/** One raw HTTP/1.1 exchange, so nothing between the test and the server rewrites the request. */
async function raw(url: string, request: string): Promise<{ status: number; head: string; body: string }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', resolve);
    socket.on('error', reject);
    socket.write(request);
  });
  const text = Buffer.concat(chunks).toString('utf8');
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), head, body };
}

describe('the HTTP edge', () => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane();
  });
  afterAll(() => t.close());

  it('answers a URL over 16 KB with 431 in the error envelope', async () => {
    const r = await raw(
      t.url,
      `GET /api/v2/products?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(r.status).toBe(431);
    expect(r.head).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(r.body)).toEqual({
      error: { code: 'HEADERS_TOO_LARGE', message: expect.stringContaining('16 KB') },
    });
  });

  it('answers an oversized header and a request that is not HTTP in the envelope', async () => {
    const big = await raw(
      t.url,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
    );
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body).error.code).toBe('HEADERS_TOO_LARGE');
    const garbage = await raw(t.url, 'HELLO THERE\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body).error.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a body nested 10,000 deep or holding 1e400 with 400 naming the bound', async () => {
    const deep = await t.call('POST', '/api/v2/products', {
      key: t.tenants.a.admin,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: '['.repeat(10_000) + ']'.repeat(10_000),
    });
    expect(deep.status).toBe(400);
    expect(deep.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { field: 'body', bound: 'nesting depth at most 64' },
    });
    const huge = await t.call('POST', '/api/v2/oauth/token', {
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: '{"grant_type":"client_credentials","n":1e400}',
    });
    expect(huge.status).toBe(400);
    expect(huge.body.error.details.bound).toMatch(/IEEE 754/);
  });

  it('sends nosniff on every answer, and HSTS only in production', async () => {
    const r = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.a.admin });
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('strict-transport-security')).toBeNull();
    expect((await t.call('GET', '/nowhere')).headers.get('x-content-type-options')).toBe('nosniff');
    const prod = await startTestControlPlane({ config: { env: 'production' } });
    try {
      const p = await prod.call('GET', '/healthz');
      expect(p.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect(p.headers.get('x-content-type-options')).toBe('nosniff');
    } finally {
      await prod.close();
    }
  });
});
