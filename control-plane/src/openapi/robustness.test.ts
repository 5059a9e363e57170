/**
 * Every documented operation, sent what a careless or hostile client sends (wrong types, wrong shapes,
 * malformed JSON, odd path values and queries): every answer is a client error in the error envelope,
 * never a 5xx. 503s that the spec documents for unavailable features (`*_UNAVAILABLE`) are answers, not
 * faults. Bounded: about 3,500 requests against one SQLite control plane.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';

const PATH_VALUES = [
  'x',
  '-1',
  '%00',
  '%C0%AF',
  'a'.repeat(300),
  '00000000-0000-0000-0000-000000000000',
  '9'.repeat(30),
];
const BODIES: unknown[] = [
  null,
  1,
  'str',
  [],
  {},
  { a: 1 },
  { count: 'x', productId: 1 },
  { items: 'no' },
  { results: [{}] },
  { url: 1, events: 'x' },
  { status: 'SEALED', evidence: [], attempt_id: 5 },
  { name: 'x'.repeat(100_000) },
  { gtin: '1'.repeat(14), serial: {} },
];
const QUERIES = [
  '',
  '?limit=-1',
  '?limit=abc',
  '?cursor=%%%',
  '?format=xml',
  '?printState=maybe',
  '?date=notadate',
];
const RAW_BODIES = ['{', '{"a":', '\u0000', '[]'.repeat(10_000)];
/** Bodies within the size limit that break whatever walks them after the parse. */
const HOSTILE_BODIES = [
  '['.repeat(10_000) + ']'.repeat(10_000),
  '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000),
  '{"name":"x","n":1e400}',
  '[-1e400]',
  '{"items":[{"v":12345678901234567890e300}]}',
];

describe('malformed requests to every documented operation', () => {
  let t: TestControlPlane;
  let paths: Record<string, Record<string, unknown>>;
  beforeAll(async () => {
    t = await startTestControlPlane({
      env: { RATE_LIMITS: 'free=1000000/60,mid_market=1000000/60,enterprise=1000000/60' },
    });
    paths = (await t.call('GET', '/api/v2/openapi.json')).body.paths;
  });
  afterAll(() => t?.close());

  const fault = (status: number, body: { error?: { code?: string } } | undefined) =>
    status >= 500 && !/_UNAVAILABLE$/.test(body?.error?.code ?? '');

  it('answers each with a client error or a documented answer, never a 5xx', async () => {
    const faults: string[] = [];
    let sent = 0;
    for (const [path, ops] of Object.entries(paths)) {
      for (const method of Object.keys(ops).filter((m) =>
        ['get', 'post', 'put', 'patch', 'delete'].includes(m),
      )) {
        const concrete = path.includes('{') ? PATH_VALUES.map((v) => path.replace(/\{[^}]+\}/g, v)) : [path];
        for (const p of concrete) {
          const variants =
            method === 'get'
              ? QUERIES.map((q) => ({ url: p + q, body: undefined as unknown }))
              : method === 'delete'
                ? [{ url: p, body: undefined as unknown }]
                : BODIES.map((body) => ({ url: p, body }));
          for (const v of variants) {
            sent++;
            const r = await t.call(method.toUpperCase(), v.url, {
              key: t.tenants.a.admin,
              body: v.body,
              headers: method === 'post' ? { 'Idempotency-Key': randomUUID() } : {},
            });
            if (fault(r.status, r.body))
              faults.push(
                `${method.toUpperCase()} ${v.url.slice(0, 80)} -> ${r.status} ${r.text.slice(0, 120)}`,
              );
          }
        }
        if (method !== 'post' || path.includes('{')) continue;
        for (const text of RAW_BODIES) {
          sent++;
          const res = await fetch(t.url + path, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${t.tenants.a.admin}`,
              'content-type': 'application/json',
              'idempotency-key': randomUUID(),
            },
            body: text,
          });
          const text2 = await res.text();
          if (res.status >= 500)
            faults.push(
              `POST ${path} ${JSON.stringify(text.slice(0, 12))} -> ${res.status} ${text2.slice(0, 120)}`,
            );
        }
      }
    }
    expect(sent).toBeGreaterThan(1000);
    expect(faults).toEqual([]);
  }, 120_000);

  it('bounds nesting depth and number range at the door, with and without an Idempotency-Key', async () => {
    const faults: string[] = [];
    let sent = 0;
    for (const [path, ops] of Object.entries(paths)) {
      for (const method of Object.keys(ops).filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))) {
        const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
        for (const text of HOSTILE_BODIES) {
          for (const headers of <Record<string, string>[]>[
            { authorization: `Bearer ${t.tenants.a.admin}`, 'idempotency-key': randomUUID() },
            { authorization: `Bearer ${t.tenants.a.admin}` },
            {},
          ]) {
            sent++;
            const res = await fetch(t.url + url, {
              method: method.toUpperCase(),
              headers: { ...headers, 'content-type': 'application/json' },
              body: text,
            });
            const answer = await res.text();
            const envelope = (() => {
              try {
                return (JSON.parse(answer) as { error?: { message?: string } }).error?.message;
              } catch {
                return undefined;
              }
            })();
            if (res.status >= 500 || (res.status === 400 && !envelope))
              faults.push(
                `${method.toUpperCase()} ${url} ${text.slice(0, 16)} (${Object.keys(headers).join(',')}) -> ${res.status} ${answer.slice(0, 120)}`,
              );
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(300);
    expect(faults).toEqual([]);
  }, 120_000);
});
