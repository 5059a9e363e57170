import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logging/logger.js';

const QUIET = new Set(['/healthz', '/readyz', '/metrics']);

/** Gives each request a child logger carrying its correlation id, and logs one line when it finishes. */
export function requestLog(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    req.log = log.child({ module: 'http', correlationId: req.correlationId });
    res.on('finish', () => {
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!req.log.isLevelEnabled(level) || QUIET.has(req.path)) return;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const fields = { method: req.method, route: req.routePath, path: req.path, status: res.statusCode, ms };
      req.log[level](fields, 'request');
    });
    next();
  };
}
