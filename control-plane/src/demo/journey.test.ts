import { describe, expect, it } from 'vitest';
import { type HttpTransport, httpCaller } from './journey.js';

/** A transport that records each call and answers from `answers` in turn (an Error is thrown). */
function scripted(answers: (Error | { status: number; text: string })[]) {
  const calls: { method: string; url: string; headers: Record<string, string>; body: string | undefined }[] =
    [];
  const transport: HttpTransport = (method, url, headers, body) => {
    calls.push({ method, url, headers, body });
    const next = answers.shift()!;
    if (next instanceof Error) return Promise.reject(next);
    return Promise.resolve({ status: next.status, headers: new Headers(), text: next.text });
  };
  return { calls, transport };
}

const reset = (where: 'error' | 'cause') => {
  const err = new Error('socket hang up') as Error & { code?: string };
  if (where === 'error') err.code = 'ECONNRESET';
  else (err as Error & { cause: unknown }).cause = { code: 'UND_ERR_SOCKET' };
  return err;
};

describe('httpCaller over a transport', () => {
  it('sends the bearer key and the body as JSON, and answers the status, the body parsed and its text', async () => {
    const { calls, transport } = scripted([
      { status: 201, text: '{"id":"p1"}' },
      { status: 204, text: '' },
    ]);
    const call = httpCaller('http://127.0.0.1:1', transport);
    const created = await call('POST', '/api/v2/products', { key: 'k', body: { name: 'x' } });
    expect(created).toMatchObject({ status: 201, body: { id: 'p1' }, text: '{"id":"p1"}' });
    expect(calls[0]).toEqual({
      method: 'POST',
      url: 'http://127.0.0.1:1/api/v2/products',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: '{"name":"x"}',
    });
    const empty = await call('GET', '/healthz');
    expect(empty).toMatchObject({ status: 204, body: undefined, text: '' });
  });

  it('sends a call again once when its connection was reset and sending it again is safe', async () => {
    // A GET, and a POST with an Idempotency-Key: sent again, whichever client said the connection was reset.
    for (const where of ['error', 'cause'] as const) {
      const { calls, transport } = scripted([reset(where), { status: 200, text: '{}' }]);
      expect((await httpCaller('http://h', transport)('GET', '/x')).status).toBe(200);
      expect(calls).toHaveLength(2);
    }
    const keyed = scripted([reset('error'), { status: 200, text: '{}' }]);
    const headers = { 'Idempotency-Key': 'a' };
    expect((await httpCaller('http://h', keyed.transport)('POST', '/x', { headers, body: {} })).status).toBe(
      200,
    );
    // A POST without one is not: it may have been done.
    const unkeyed = scripted([reset('error'), { status: 200, text: '{}' }]);
    await expect(httpCaller('http://h', unkeyed.transport)('POST', '/x', { body: {} })).rejects.toThrow(
      'hang up',
    );
    expect(unkeyed.calls).toHaveLength(1);
    // Reset twice: the second failure is the answer.
    const twice = scripted([reset('error'), reset('error')]);
    await expect(httpCaller('http://h', twice.transport)('GET', '/x')).rejects.toThrow('hang up');
  });
});
