/**
 * Test support: a real webhook receiver on 127.0.0.1 (node:http on port 0) that records every request
 * with its raw body and answers as the test says.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, as received. */
  body: string;
  /** Arrival time (Date.now()). */
  at: number;
}

/**
 * How to answer one request: a status, optionally after a delay (longer than the timeout = a hang), with
 * headers and a body (the status as text when none is given).
 */
export type Answer =
  number | { status: number; delayMs?: number; headers?: Record<string, string>; body?: string };

export type Responder = (request: ReceivedRequest, index: number) => Answer;

export interface TestReceiver {
  /** Base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  received: ReceivedRequest[];
  /** Replaces how requests are answered from now on. */
  respond(responder: Responder): void;
  /** Resolves once `count` requests (matching `path`, when given) have arrived; throws after `timeoutMs`. */
  waitFor(count: number, opts?: { path?: string; timeoutMs?: number }): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(responder: Responder = () => 200): Promise<TestReceiver> {
  let answer = responder;
  const received: ReceivedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedRequest = {
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const a = answer(request, received.length - 1);
      const { status, delayMs = 0, headers = {}, body } = typeof a === 'number' ? { status: a } : a;
      const send = () => {
        timers.delete(timer);
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(body ?? String(status));
      };
      const timer = setTimeout(send, delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    respond: (r) => {
      answer = r;
    },
    waitFor: async (count, opts = {}) => {
      const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
      const matching = () => received.filter((r) => opts.path === undefined || r.path === opts.path);
      while (matching().length < count) {
        if (Date.now() > deadline) {
          throw new Error(
            `receiver got ${matching().length} of ${count} expected requests${opts.path ? ` on ${opts.path}` : ''}`,
          );
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      return matching();
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
