/**
 * Reading the untrusted JSON of a proof: each accessor returns the value or throws Broken naming the field,
 * which the check of that link reports as its reason.
 */

/** Why a link of the proof does not verify (a missing field, a bad signature, two values that differ). */
export class Broken extends Error {
  override readonly name = 'Broken';
}

export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown, what: string): Json {
  if (!isObject(v)) throw new Broken(`${what} is not an object`);
  return v;
}

export function str(o: Json, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new Broken(`${what}.${key} is not a string`);
  return v;
}

export function strOrNull(o: Json, key: string, what: string): string | null {
  return o[key] === null ? null : str(o, key, what);
}

export function optStr(o: Json, key: string, what: string): string | undefined {
  return o[key] === undefined ? undefined : str(o, key, what);
}

export function int(o: Json, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new Broken(`${what}.${key} is not a non-negative integer`);
  }
  return v;
}

/** An RFC 3339 date-time, as milliseconds since the epoch. */
export function time(o: Json, key: string, what: string): number {
  const v = str(o, key, what);
  const ms = Date.parse(v);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) || Number.isNaN(ms)) {
    throw new Broken(`${what}.${key} is not a date-time`);
  }
  return ms;
}

export function timeOrNull(o: Json, key: string, what: string): number | null {
  return o[key] === null ? null : time(o, key, what);
}

/** Whether `t` lies in the half-open window [from, until); a null `until` is open-ended. */
export function inWindow(t: number, from: number, until: number | null): boolean {
  return t >= from && (until === null || t < until);
}
