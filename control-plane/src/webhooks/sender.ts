import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

/** The outcome of one HTTP try: the receiver's status, or why there was none. */
export interface SendResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** The receiver's `Retry-After` header, raw. */
  retryAfter?: string;
}

export interface SendRequest {
  url: URL;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  lookup?: LookupFunction | undefined;
  /** Aborts the try (shutdown); the result then says `aborted`. */
  signal?: AbortSignal;
}

/** At most this much of a receiver's answer is read; the rest is dropped with the connection. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs one delivery over keep-alive connections. Redirects are not followed. The timeout covers the
 * whole exchange (connect, answer and body), so a receiver that trickles bytes cannot hold a worker
 * slot. Never throws: every failure becomes a result with `error` set.
 */
export class WebhookSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(options: { maxSockets: number }) {
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: options.maxSockets });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: options.maxSockets });
  }

  send(request: SendRequest): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      const finish = (result: Omit<SendResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        resolve({ ...result, durationMs: elapsed() });
      };
      const isHttps = request.url.protocol === 'https:';
      let req: http.ClientRequest;
      try {
        req = (isHttps ? https : http).request(request.url, {
          method: 'POST',
          agent: isHttps ? this.httpsAgent : this.httpAgent,
          headers: { ...request.headers, 'Content-Length': String(Buffer.byteLength(request.body)) },
          ...(request.lookup ? { lookup: request.lookup } : {}),
        });
      } catch (err) {
        resolve({ statusCode: null, error: describe(err as NodeJS.ErrnoException), durationMs: elapsed() });
        return;
      }
      const timer = setTimeout(() => {
        finish({ statusCode: null, error: `timeout after ${request.timeoutMs} ms` });
        req.destroy();
      }, request.timeoutMs);
      const onAbort = () => {
        finish({ statusCode: null, error: 'aborted' });
        req.destroy();
      };
      request.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err: NodeJS.ErrnoException) => {
        finish({ statusCode: null, error: describe(err) });
      });
      req.on('response', (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () =>
          finish({
            statusCode: res.statusCode ?? null,
            error: null,
            ...(typeof res.headers['retry-after'] === 'string'
              ? { retryAfter: res.headers['retry-after'] }
              : {}),
          });
        res.on('end', done);
        // A receiver that answers and then closes mid-body has still answered with a status.
        res.on('close', done);
        res.on('error', () => undefined);
      });
      req.setNoDelay(true);
      req.end(request.body);
    });
  }

  /** Closes pooled connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function describe(err: NodeJS.ErrnoException): string {
  if (err.name === 'AddressRefusedError') return err.message;
  const code = err.code ? `${err.code}: ` : '';
  return `${code}${err.message}`.slice(0, 500);
}
