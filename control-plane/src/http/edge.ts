/**
 * What every answer carries, and what the HTTP parser answers before a request reaches Express: both in
 * the one error envelope, `{ "error": { "code", "message" } }`.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { RequestHandler } from 'express';

/**
 * `X-Content-Type-Options: nosniff` on every answer (a browser never reads our JSON as HTML or script);
 * in production also HSTS (RFC 6797): browsers that reached us over HTTPS never try plain HTTP again.
 */
export function securityHeaders(opts: { production: boolean }): RequestHandler {
  const headers = Object.entries(securityHeaderValues(opts));
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}

/** The headers `securityHeaders` sets, for a handler that answers before Express (public/fast-path.ts). */
export function securityHeaderValues(opts: { production: boolean }): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    ...(opts.production ? { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

const PARSER_ANSWERS: Record<string, [status: number, reason: string, code: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [
    431,
    'Request Header Fields Too Large',
    'HEADERS_TOO_LARGE',
    'The request line (its URL) and headers together exceed 16 KB',
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [
    408,
    'Request Timeout',
    'REQUEST_TIMEOUT',
    'The request was not received in time',
  ],
};

/**
 * Answers requests Node's HTTP parser refuses (an oversized URL or header block, bytes that are not
 * HTTP/1.1) in the error envelope instead of Node's empty default, and closes the connection.
 */
export function answerParserErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason, code, message] = PARSER_ANSWERS[err.code ?? ''] ?? [
      400,
      'Bad Request',
      'VALIDATION_ERROR',
      'The request is not valid HTTP/1.1',
    ];
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
