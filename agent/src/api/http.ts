/**
 * One HTTP exchange with a timeout, and the mapping of failures to typed errors: no answer is `NETWORK`
 * or `TIMEOUT`; an answer outside 2xx is `HTTP` with the status and the control plane's error code
 * (`{ error: { code, message, details } }`).
 */
import { AgentError } from '../errors.js';

export type FetchLike = typeof fetch;

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  /** Serialised as JSON. */
  json?: unknown;
  timeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined for an empty or non-JSON body. */
  body: unknown;
}

/** Sends one request. Never throws for an HTTP status; throws NETWORK/TIMEOUT when no answer came. */
export async function httpExchange(req: HttpRequest, fetchImpl: FetchLike = fetch): Promise<HttpAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  let body: string | undefined;
  if (req.json !== undefined) {
    body = JSON.stringify(req.json);
    headers['content-type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetchImpl(req.url, {
      method: req.method,
      headers,
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(req.timeoutMs),
    });
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      throw new AgentError('TIMEOUT', `${req.method} ${req.url}: no answer within ${req.timeoutMs} ms`, {
        cause: err,
      });
    throw new AgentError('NETWORK', `${req.method} ${req.url}: ${describeNetworkError(err)}`, { cause: err });
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw new AgentError('NETWORK', `${req.method} ${req.url}: the answer was cut off`, { cause: err });
  }
  let parsed: unknown;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** The typed error for an answer outside 2xx. */
export function httpError(what: string, answer: HttpAnswer): AgentError {
  const envelope = answer.body as
    { error?: { code?: string; message?: string; details?: unknown } } | undefined;
  const e = envelope?.error;
  const message = `${what}: ${answer.status}${e?.code ? ` ${e.code}` : ''}${e?.message ? ` (${e.message})` : ''}`;
  return new AgentError('HTTP', message, {
    status: answer.status,
    apiCode: e?.code,
    details: e?.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : undefined,
  });
}

/** An unreachable or overloaded control plane: worth another try later with the same request. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof AgentError)) return false;
  if (err.code === 'NETWORK' || err.code === 'TIMEOUT') return true;
  return err.code === 'HTTP' && (err.status === 429 || err.status === 408 || (err.status ?? 0) >= 500);
}

/** Joins the control plane's base URL and an API path. */
export function joinUrl(base: string, p: string): string {
  return base.replace(/\/+$/, '') + (p.startsWith('/') ? p : `/${p}`);
}
