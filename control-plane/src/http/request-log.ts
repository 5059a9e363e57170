import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logging/logger.js';

const QUIET = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * A request's logger: the fields every line of the request carries (module, correlation id, then the tenant and
 * principal once authenticated), and the child logger that carries them, made when something first logs. Most
 * requests log nothing but their one line, which goes out with the fields merged in: no child logger per
 * request and per authentication (each one serialises its fields again).
 */
class RequestLogger {
  private child: Logger | undefined;

  constructor(
    private readonly root: Logger,
    private readonly fields: Record<string, unknown>,
  ) {}

  get logger(): Logger {
    return (this.child ??= this.root.child(this.fields));
  }

  bind(fields: Record<string, unknown>): void {
    if (this.child) this.child = this.child.child(fields);
    Object.assign(this.fields, fields);
  }

  line(level: 'info' | 'error', fields: Record<string, unknown>, message: string): void {
    if (this.child) this.child[level](fields, message);
    else this.root[level]({ ...this.fields, ...fields }, message);
  }
}

const REQUEST_LOGGER = Symbol('request logger');
type Logged = Request & { [REQUEST_LOGGER]?: RequestLogger };

/**
 * The request's logger (made when first asked for), or undefined before `requestLog` saw the request: a
 * function rather than a property of the request, which would cost every request a property defined on it.
 */
export function requestLogger(req: Request): Logger | undefined {
  return (req as Logged)[REQUEST_LOGGER]?.logger;
}

/** Adds fields to every later log line of this request (the tenant and principal, once authenticated). */
export function bindRequestLog(req: Request, fields: Record<string, unknown>): void {
  (req as Logged)[REQUEST_LOGGER]?.bind(fields);
}

/** Gives each request a logger carrying its correlation id, and logs one line when it finishes. */
export function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const logger = new RequestLogger(log, { module: 'http', correlationId: req.correlationId });
    (req as Logged)[REQUEST_LOGGER] = logger;
    res.on('finish', () => {
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!log.isLevelEnabled(level) || QUIET.has(req.path)) return;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.line(
        level,
        { method: req.method, route: req.routePath, path: req.path, status: res.statusCode, ms },
        'request',
      );
    });
    next();
  };
}
