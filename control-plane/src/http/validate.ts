import { z, type ZodType } from 'zod';
import { ApiError } from './api-error.js';

/** Renders a zod path as `items[3].gtin`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, seg) => {
    if (typeof seg === 'number') return `${acc}[${seg}]`;
    return acc ? `${acc}.${String(seg)}` : String(seg);
  }, '');
}

/**
 * Parses one part of the request; a failure is 400 VALIDATION_ERROR whose message names the field and
 * the bound, with every issue in `details.issues`.
 */
export function parseOrThrow<T>(schema: ZodType<T>, value: unknown, where: RequestPart): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationError(result.error.issues, where);
}

export type RequestPart = 'body' | 'query' | 'path';

/** 400 VALIDATION_ERROR for zod issues found in one part of the request. */
export function validationError(zodIssues: readonly z.core.$ZodIssue[], where: RequestPart): ApiError {
  const issues = zodIssues.map((i) => ({
    field: fieldPath(i.path) || where,
    message: i.message,
    code: i.code,
  }));
  const first = issues[0]!;
  return ApiError.validation(first.field, `${first.field}: ${first.message}`, { in: where, issues });
}

/** A query-string boolean: only `true` and `false` (z.coerce.boolean would read "false" as true). */
export const queryBoolean = z.enum(['true', 'false']).transform((v) => v === 'true');

/** A query-string integer within bounds. */
export function queryInt(min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}
