import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, toApiError } from './api-error.js';
import { errorReply, sendReply } from './reply.js';
import { requestLogger } from './request-log.js';
import { pathMatcher, type RouteDef } from './route.js';

/**
 * After every route: an unknown path is 404, a known path with a wrong verb is 405 with `Allow`.
 */
export function notFoundOrMethodNotAllowed(routes: readonly RouteDef[]): RequestHandler {
  const known = routes.map((r) => ({ method: r.method.toUpperCase(), match: pathMatcher(r.path) }));
  return (req, _res, next) => {
    const allowed = known.filter((k) => k.match.test(req.path)).map((k) => k.method);
    if (allowed.length === 0) return next(ApiError.plain(404, `No route for ${req.method} ${req.path}`));
    const allow = [...new Set(allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed)].join(', ');
    next(ApiError.plain(405, `${req.method} is not allowed on ${req.path}`, { headers: { Allow: allow } }));
  };
}

interface BodyParserError {
  type?: string;
  status?: number;
  message?: string;
  bound?: string;
}

/** The one place errors become HTTP: typed errors as they are, anything else a 500 that leaks nothing. */
export function errorHandler(): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const parserType = (err as BodyParserError | null)?.type;
    let apiError: ApiError;
    if (parserType === 'entity.parse.failed') {
      apiError = ApiError.validation('body', 'The request body is not valid JSON');
    } else if (parserType === 'entity.out.of.bounds') {
      const e = err as BodyParserError;
      apiError = ApiError.validation('body', e.message ?? 'The request body is out of bounds', {
        bound: e.bound,
      });
    } else if (parserType === 'entity.too.large') {
      apiError = new ApiError('PAYLOAD_TOO_LARGE', 'The request body is larger than this operation accepts');
    } else if (err instanceof URIError) {
      // A path the router cannot percent-decode (e.g. `%E0%A4%A`): the client's mistake, not ours.
      apiError = ApiError.validation('path', 'The request path is not valid percent-encoded UTF-8');
    } else if (parserType === 'encoding.unsupported' || parserType === 'charset.unsupported') {
      apiError = new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as UTF-8 application/json');
    } else {
      apiError = toApiError(err);
    }
    if (apiError.status >= 500) {
      requestLogger(req)?.error(
        { err: apiError.cause ?? apiError, correlationId: req.correlationId },
        'request failed',
      );
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    void sendReply(res, errorReply(apiError));
  };
}
