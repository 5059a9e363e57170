import { ApiError } from '../http/api-error.js';

/**
 * Opaque paging cursors: the (created_at, id) of the last item of a page, newest-first order. Stable
 * under inserts, unlike an offset.
 */
export interface CursorPosition {
  createdAt: string;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(`${position.createdAt}|${position.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): CursorPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const [createdAt, id, ...rest] = text.split('|');
  if (!createdAt || !id || rest.length > 0 || Number.isNaN(Date.parse(createdAt))) {
    throw ApiError.validation('cursor', 'cursor: not a cursor this API returned');
  }
  return { createdAt, id };
}

/** A page of a newest-first list. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

/** Builds a page from `limit + 1` fetched rows. */
export function pageOf<R extends { created_at: string; id: string }, T>(
  rows: readonly R[],
  limit: number,
  view: (row: R) => T,
): Page<T> {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  const last = items[items.length - 1];
  return {
    data: items.map(view),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
  };
}
