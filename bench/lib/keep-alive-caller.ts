/**
 * How the load's simulated devices call the control plane: node:http on kept-alive connections, instead of
 * fetch. In a CPU profile of the devices' thread on the flat-out floor, fetch (undici: its streams, abort
 * signals, request objects) was 44 % of the thread's busy time, on the two cores the control plane and
 * PostgreSQL use too; a device on a floor runs on its own machine. The calls and their answers are the same
 * as `httpCaller`'s (status, headers, the body parsed as JSON and as text).
 */
import http from 'node:http';
import type { ApiCaller, CallResult } from '@dpp/control-plane';

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** `call` for a control plane at `baseUrl`, over connections kept alive between calls. */
export function keepAliveCaller(baseUrl: string): ApiCaller {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true });
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const send = () =>
      new Promise<CallResult>((resolve, reject) => {
        const req = http.request({ host: hostname, port, method, path, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.once('error', reject);
          res.once('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            const answered = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
                answered.append(name, v);
            }
            resolve({ status: res.statusCode!, headers: answered, body: parsed, text });
          });
        });
        req.once('error', reject);
        req.end(body);
      });
    try {
      return await send();
    } catch (err) {
      // A kept-alive connection the server closed as this request went out: sent again once when that is safe.
      const code = (err as { code?: string }).code;
      const reset = code === 'ECONNRESET' || code === 'EPIPE';
      if (!reset || !(IDEMPOTENT.has(method) || headers['Idempotency-Key'])) throw err;
      return send();
    }
  };
}
