/**
 * Cursor paging of every list operation: the `{ data, hasMore, nextCursor }` envelope, its page-size and
 * cursor query parameters, and the opaque cursor (the sort it was made for, the last sort key and the
 * last id, so a page is stable under inserts, unlike an offset).
 */
import { z } from 'zod';
import { ApiError } from './api-error.js';
import { queryInt } from './validate.js';

/** Page size of list operations: 1 to 100, 25 when omitted. */
export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

export const LimitQuery = queryInt(1, MAX_PAGE_SIZE)
  .optional()
  .meta({ description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})` });

export const CursorQuery = z
  .string()
  .min(1)
  .max(512)
  .optional()
  .meta({ description: 'Opaque cursor: the nextCursor of the previous page' });

/** One page of a list. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** The page envelope of every list, for the OpenAPI document: `{ data, hasMore, nextCursor }`. */
export function pageEnvelope<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    hasMore: z.boolean(),
    nextCursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as cursor to read the next page; null at the end' }),
  });
}

interface CursorBody {
  /** The sort the cursor was made for. */
  s: string;
  /** The sort key value of the last item. */
  v: string | number;
  /** The id of the last item (tie-breaker). */
  i: string;
}

/** An opaque cursor: base64url of the sort, the last sort key and the last id. */
export function encodeCursor(sort: string, value: string | number, id: string): string {
  return Buffer.from(JSON.stringify({ s: sort, v: value, i: id } satisfies CursorBody)).toString('base64url');
}

/** Reads a cursor made for `sort`; anything else is 400 VALIDATION_ERROR naming `cursor`. */
export function decodeCursor(cursor: string, sort: string): { value: string | number; id: string } {
  let body: Partial<CursorBody> | undefined;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    body = undefined;
  }
  const valueOk = typeof body?.v === 'string' || typeof body?.v === 'number';
  if (!body || typeof body.i !== 'string' || !valueOk) {
    throw ApiError.validation('cursor', 'cursor: not a cursor this API issued');
  }
  if (body.s !== sort) {
    throw ApiError.validation('cursor', `cursor: it belongs to sort=${String(body.s)}, not sort=${sort}`);
  }
  return { value: body.v!, id: body.i };
}

/** Reads a cursor whose sort key is a number (a version, a row). */
export function decodeNumberCursor(cursor: string, sort: string): number {
  const n = Number(decodeCursor(cursor, sort).value);
  if (!Number.isSafeInteger(n)) throw ApiError.validation('cursor', 'cursor: not a cursor this API issued');
  return n;
}

/** Cuts `limit + 1` fetched rows into a page; the extra row only says that there is more. */
export function toPage<R, T>(
  rows: readonly R[],
  limit: number,
  view: (r: R) => T,
  cursorOf: (r: R) => string,
): Page<T> {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  return {
    data: page.map(view),
    hasMore,
    nextCursor: hasMore && page.length > 0 ? cursorOf(page[page.length - 1]!) : null,
  };
}
