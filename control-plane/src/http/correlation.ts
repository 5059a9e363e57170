import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const CORRELATION_HEADER = 'X-Correlation-Id';
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Accepts the caller's X-Correlation-Id (when it is a sane token), otherwise generates one, and echoes
 * it on the response. It flows into logs, the audit log and events.
 */
/** The caller's correlation id when it is a sane token, otherwise a new one. */
export function correlationIdOf(given: string | undefined): string {
  return given && ACCEPTABLE.test(given) ? given : randomUUID();
}

export function correlationId() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const id = correlationIdOf(req.get(CORRELATION_HEADER));
    req.correlationId = id;
    res.setHeader(CORRELATION_HEADER, id);
    next();
  };
}
