/**
 * The local console: a small HTTP server bound to the loopback interface for the desktop app, the
 * console page and `dpp-agent status`. Reading is open to whoever is on this machine, so it refuses any
 * other bind address, any Host header that is not a loopback name (DNS rebinding), and state-changing
 * requests that are not `application/json` (a web page cannot send those cross-origin without a preflight
 * this server never answers). When supervisors are configured, attest, fail and re-print need a
 * supervisor session (`Authorization: Bearer <token>` from `POST /api/session`), and the attestation
 * names the session's supervisor. Without supervisors (development, the agent's own tests) those routes
 * take no session and attest takes the supervisor from its body, as before.
 *
 * GET  /  and  /ui/{file}           the console page (strict CSP, see ui-files.ts)
 * GET  /api/session                 { required, supervisor, expiresAt } of the bearer token, if any
 * POST /api/session                 { pin, id? }  sign in: 201 { token, supervisor, expiresAt }; 401; 429
 * DELETE /api/session               sign out
 *
 * GET  /api/status                  printers, current and recent jobs, outbox depth, connections
 * GET  /api/events                  server-sent events of every state change
 * GET  /api/jobs/{ref}              attempts, evidence, results of one job
 * GET  /api/jobs/{ref}/preview.png  the QR preview of its label
 * POST /api/jobs/{ref}/attest       { supervisor: { id, name? }, note?, attemptId? }  human attestation
 * POST /api/jobs/{ref}/fail         { reason, detail?, attemptId? }
 * POST /api/jobs/{ref}/reprint      { attemptId? }  send the same label again while it awaits attestation
 * POST /api/jobs/{ref}/scan         { data, epc?, attemptId? }  a scan entered at the console (no scanner)
 *
 * `attemptId` names the attempt the person is looking at. When the job has moved on to another attempt
 * (the label on screen was failed and printed again), the action is refused with 409 ATTEMPT_CHANGED, so
 * nobody attests a label they have not seen.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { z } from 'zod';
import { gs1HriToRaw } from '@dpp/shared';
import { AgentError, toAgentError } from '../errors.js';
import type { Supervisor } from '../jobs/index.js';
import type { Logger } from '../log.js';
import type { ConsoleBackend } from './backend.js';
import { PIN_PATTERN } from './pin.js';
import { SupervisorSessions, type SupervisorAccount } from './sessions.js';
import { SECURITY_HEADERS, defaultUiDir, readUiFile } from './ui-files.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const MAX_BODY = 16 * 1024;

/** The attempt the person acted on (see the header); absent, the action goes to the current attempt. */
const attemptId = z.string().min(1).max(100).optional();
const Attest = z.object({
  supervisor: z.object({ id: z.string().min(1).max(100), name: z.string().min(1).max(100).optional() }),
  note: z.string().max(500).optional(),
  attemptId,
});
/** With a session: the supervisor is the session's, so the body may not name one. */
const SignedAttest = z.object({ note: z.string().max(500).optional(), attemptId }).strict();
const Reprint = z.object({ attemptId }).strict();
const SignIn = z.object({
  pin: z.string().regex(PIN_PATTERN, 'a PIN is 4 to 64 visible ASCII characters'),
  id: z.string().min(1).max(100).optional(),
});
const Fail = z.object({
  reason: z.string().min(1).max(100),
  detail: z.string().max(1000).optional(),
  attemptId,
});
const Scan = z.object({
  data: z.string().min(1).max(2000),
  /**
   * The label's other symbols (DataMatrix, GS1-128), each as a scanner with AIM identifiers sends it: `]d1`
   * and the data, or `]d2` / `]C1` and the GS1 data raw (GS separators) or in its `(01)…(21)…` form.
   */
  symbols: z
    .array(
      z.object({
        aimId: z.string().regex(/^\][A-Za-z][0-9A-Za-z]$/, 'an AIM symbology identifier such as ]d2'),
        data: z.string().min(1).max(2000),
      }),
    )
    .max(8)
    .optional(),
  /** SGTIN-96 (24 hex digits) or SGTIN-198 (52). */
  epc: z
    .string()
    .regex(/^(?:[0-9A-Fa-f]{24}|[0-9A-Fa-f]{52})$/)
    .optional(),
  attemptId,
});

/** GS1 symbols (FNC1 first: `]d2`, `]C1`, `]Q3`) typed in their `(01)…` form, as scanners send them: raw. */
function scannedSymbol(s: { aimId: string; data: string }): { aimId: string; data: string } {
  if (!GS1_AIM_IDS.has(s.aimId) || !s.data.startsWith('(')) return s;
  try {
    return { aimId: s.aimId, data: gs1HriToRaw(s.data) };
  } catch (err) {
    throw new HttpError(
      400,
      'VALIDATION_ERROR',
      `${s.aimId}${s.data} is not a GS1 element string: ${(err as Error).message}`,
    );
  }
}
const GS1_AIM_IDS = new Set([']d2', ']C1', ']Q3']);

export interface ConsoleServerOptions {
  backend: ConsoleBackend;
  host: string;
  port: number;
  log: Logger;
  /** SSE keep-alive comment period. */
  keepAliveMs?: number;
  /** Supervisors who may sign in; with none, attest/fail/reprint need no session (see above). */
  supervisors?: readonly SupervisorAccount[];
  /** Idle time that ends a supervisor session; 10 minutes by default. */
  sessionIdleMs?: number;
  /** The console page's folder; `ui/` beside this module by default; null serves no page. */
  uiDir?: string | null;
  now?: () => number;
}

export interface ConsoleServer {
  url: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'send application/json');
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, 'PAYLOAD_TOO_LARGE', `at most ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'VALIDATION_ERROR', 'the body is not JSON');
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new HttpError(400, 'VALIDATION_ERROR', `${i.path.join('.') || 'body'}: ${i.message}`);
  }
  return r.data;
}

function bearer(req: IncomingMessage): string | null {
  const m = /^Bearer ([A-Za-z0-9_-]{20,100})$/.exec(req.headers.authorization ?? '');
  return m ? m[1]! : null;
}

function hostAllowed(req: IncomingMessage): boolean {
  const host = req.headers.host;
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return LOOPBACK.has(name);
}

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  if (!LOOPBACK.has(options.host))
    throw new AgentError('CONFIG_INVALID', `the console binds to loopback only, not ${options.host}`);
  const { backend, log } = options;
  const streams = new Set<ServerResponse>();
  const uiDir = options.uiDir === undefined ? defaultUiDir() : options.uiDir;
  const sessions = new SupervisorSessions({
    supervisors: options.supervisors ?? [],
    ...(options.sessionIdleMs ? { idleMs: options.sessionIdleMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  /** Refuses an action on an attempt the job has left (see the header). */
  const onAttempt = (ref: string, attemptId: string | undefined): void => {
    if (attemptId === undefined) return;
    const current = backend.currentAttempt(ref);
    if (current !== null && current !== attemptId)
      throw new HttpError(
        409,
        'ATTEMPT_CHANGED',
        `job ${ref} is now on attempt ${current}, not ${attemptId}: look at the new label first`,
      );
  };

  /** The session's supervisor for an action; null when no supervisors are configured (no sessions). */
  const supervisorOf = (req: IncomingMessage): Supervisor | null => {
    if (!sessions.required) return null;
    const session = sessions.get(bearer(req), true);
    if (!session)
      throw new HttpError(401, 'UNAUTHENTICATED', 'sign in as a supervisor first', {
        'www-authenticate': 'Bearer realm="dpp-console"',
      });
    return session.supervisor;
  };

  const sessionView = (req: IncomingMessage, res: ServerResponse): void => {
    const s = sessions.get(bearer(req));
    send(res, 200, {
      data: {
        required: sessions.required,
        supervisor: s?.supervisor ?? null,
        expiresAt: s?.expiresAt ?? null,
      },
    });
  };

  const signOut = (req: IncomingMessage, res: ServerResponse): void => {
    const who = sessions.get(bearer(req));
    if (sessions.signOut(bearer(req))) log.info({ supervisor: who?.supervisor.id }, 'supervisor signed out');
    res.writeHead(204, { 'cache-control': 'no-store' });
    res.end();
  };

  const signIn = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const b = parse(SignIn, await readJson(req));
    if (!sessions.required)
      throw new HttpError(409, 'NO_SUPERVISORS', 'no supervisors are configured on this device');
    const r = await sessions.signIn(b.pin, b.id);
    if (!r.ok) {
      log.warn({ code: r.code }, 'supervisor sign-in refused');
      if (r.code === 'TOO_MANY_ATTEMPTS')
        throw new HttpError(429, r.code, 'too many wrong PINs; wait a minute', {
          'retry-after': String(Math.ceil(r.retryAfterMs / 1000)),
        });
      if (r.code === 'PIN_NOT_UNIQUE')
        throw new HttpError(409, r.code, 'two supervisors share this PIN; sign in with your id and PIN');
      throw new HttpError(401, r.code, 'wrong PIN');
    }
    log.info({ supervisor: r.session.supervisor.id }, 'supervisor signed in');
    return send(res, 201, { data: { token: r.token, ...r.session } });
  };

  type Params = { [k: string]: string | undefined };
  type Route = (req: IncomingMessage, res: ServerResponse, params: Params) => Promise<void> | void;
  // find-my-way (the router of Fastify) matches; this file decides. Paths are matched after URL
  // normalisation (dot segments resolved), so a path the file server sees is the one the router saw.
  const router = FindMyWay({ caseSensitive: true, ignoreTrailingSlash: false });
  const on = (method: 'GET' | 'POST' | 'DELETE', path: string, route: Route) =>
    router.on(method, path, route);
  const ref = (params: Params) => params.ref!;
  const REF = ':ref(^[A-Za-z0-9_-]{1,64}$)';

  const ui: Route = async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://console').pathname;
    const file = uiDir ? await readUiFile(uiDir, path) : undefined;
    if (!file) throw new HttpError(404, 'NOT_FOUND', `no file ${path}`);
    res.writeHead(200, {
      'content-type': file.type,
      'content-length': file.body.length,
      'cache-control': 'no-cache',
    });
    res.end(file.body);
  };
  if (uiDir) {
    on('GET', '/', ui);
    on('GET', '/ui/*', ui);
  }
  on('GET', '/api/session', sessionView);
  on('POST', '/api/session', signIn);
  on('DELETE', '/api/session', signOut);
  on('GET', '/api/status', (_req, res) => send(res, 200, { data: backend.status() }));
  // For a scraper on this machine (the console binds to loopback only): the line's figures, read-only.
  on('GET', '/metrics', (_req, res) => {
    const body = Buffer.from(backend.metrics());
    res.writeHead(200, {
      'content-type': 'text/plain; version=0.0.4; charset=utf-8',
      'content-length': body.length,
      'cache-control': 'no-store',
    });
    res.end(body);
  });
  on('GET', '/api/events', (req, res) => events(req, res));
  on('GET', `/api/jobs/${REF}`, (_req, res, params) => {
    const job = backend.job(ref(params));
    if (!job) throw new HttpError(404, 'NOT_FOUND', `job ${ref(params)} is unknown to this device`);
    return send(res, 200, { data: job });
  });
  on('GET', `/api/jobs/${REF}/preview.png`, (_req, res, params) => {
    const png = backend.preview(ref(params));
    if (!png) throw new HttpError(404, 'NOT_FOUND', `no preview of job ${ref(params)}`);
    res.writeHead(200, {
      'content-type': 'image/png',
      'content-length': png.length,
      'cache-control': 'no-store',
    });
    res.end(png);
  });
  on('POST', `/api/jobs/${REF}/attest`, async (req, res, params) => {
    const who = supervisorOf(req);
    const body = await readJson(req);
    if (who) {
      if (typeof body === 'object' && body !== null && 'supervisor' in body)
        throw new HttpError(400, 'VALIDATION_ERROR', 'supervisor: comes from the session, not the body');
      const b = parse(SignedAttest, body);
      onAttempt(ref(params), b.attemptId);
      backend.attest(ref(params), who, b.note);
    } else {
      const b = parse(Attest, body);
      onAttempt(ref(params), b.attemptId);
      backend.attest(ref(params), b.supervisor, b.note);
    }
    return send(res, 202, { data: { jobRef: ref(params), accepted: 'attestation' } });
  });
  on('POST', `/api/jobs/${REF}/fail`, async (req, res, params) => {
    const who = supervisorOf(req);
    const b = parse(Fail, await readJson(req));
    onAttempt(ref(params), b.attemptId);
    const by = who ? `marked failed by supervisor ${who.name ?? who.id} (${who.id})` : undefined;
    const detail = [b.detail, by].filter(Boolean).join('; ') || undefined;
    backend.fail(ref(params), b.reason, detail?.slice(0, 1000));
    return send(res, 202, { data: { jobRef: ref(params), accepted: 'failure' } });
  });
  on('POST', `/api/jobs/${REF}/reprint`, async (req, res, params) => {
    const who = supervisorOf(req);
    onAttempt(ref(params), parse(Reprint, await readJson(req)).attemptId);
    backend.reprint(ref(params));
    if (who) log.info({ jobRef: ref(params), supervisor: who.id }, 'supervisor asked for a re-print');
    return send(res, 202, { data: { jobRef: ref(params), accepted: 'reprint' } });
  });
  on('POST', `/api/jobs/${REF}/scan`, async (req, res, params) => {
    const b = parse(Scan, await readJson(req));
    onAttempt(ref(params), b.attemptId);
    backend.scan(ref(params), {
      data: b.data,
      ...(b.symbols ? { symbols: b.symbols.map(scannedSymbol) } : {}),
      epc: b.epc?.toUpperCase(),
    });
    return send(res, 202, { data: { jobRef: ref(params), accepted: 'scan' } });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req))
      throw new HttpError(403, 'FORBIDDEN', 'the console answers loopback host names only');
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://console').pathname;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const found = router.find(method as HTTPMethod, path);
    if (found) return (found.handler as unknown as Route)(req, res, found.params);
    // A path some route serves under another method is 405; any other path is 404.
    if ((['GET', 'POST', 'DELETE'] as const).some((m) => router.find(m, path)))
      throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed here`);
    throw new HttpError(404, 'NOT_FOUND', `no route ${method} ${path}`);
  };

  const events = (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    const write = (event: string, data: unknown) =>
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    res.write('retry: 2000\n\n');
    write('status', backend.status());
    const off = backend.subscribe(write);
    const ping = setInterval(() => res.write(': ping\n\n'), options.keepAliveMs ?? 15_000);
    streams.add(res);
    req.on('close', () => {
      clearInterval(ping);
      off();
      streams.delete(res);
    });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.end();
      if (err instanceof HttpError) {
        for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
        return send(res, err.status, { error: { code: err.code, message: err.message } });
      }
      const e = toAgentError(err);
      if (e.code === 'NOT_WAITING')
        return e.details?.notFound
          ? send(res, 404, { error: { code: 'NOT_FOUND', message: e.message } })
          : send(res, 409, { error: { code: e.code, message: e.message, details: e.details } });
      log.error({ err: e.toJSON() }, 'console request failed');
      send(res, 500, { error: { code: 'INTERNAL', message: 'internal error' } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === '::1' ? '[::1]' : options.host;
  const url = `http://${host}:${port}`;
  log.info({ url }, 'console listening');
  return {
    url,
    close: async () => {
      for (const s of streams) s.end();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
