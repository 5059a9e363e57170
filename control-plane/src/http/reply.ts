import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { ApiError } from './api-error.js';
import { isBytesReply, isStreamReply, type JsonReply, type Reply } from './route.js';

export function errorReply(err: ApiError): JsonReply {
  return { status: err.status, body: err.toBody(), headers: err.headers };
}

/** Writes a reply: JSON (or an empty body for 204), serialised bytes, or a stream with its content type. */
export async function sendReply(res: Response, reply: Reply): Promise<void> {
  if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
  res.status(reply.status);
  if (isStreamReply(reply)) {
    res.setHeader('Content-Type', reply.contentType);
    await pipeline(reply.stream, res);
    return;
  }
  if (isBytesReply(reply)) {
    // res.send as res.json ends: Content-Length, HEAD, a fresh conditional GET; the type is in the headers.
    if (reply.bytes === undefined) res.end();
    else res.send(reply.bytes);
    return;
  }
  if (reply.body === undefined || reply.status === 204) {
    res.end();
    return;
  }
  res.json(reply.body);
}
