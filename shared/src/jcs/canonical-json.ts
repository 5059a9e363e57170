/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * One pass over the value that checks it really is JSON and writes its canonical text (RFC 8785 §3.2:
 * object members sorted by UTF-16 code units, ECMAScript number serialisation, JSON.stringify's minimal
 * string escaping). Whatever JSON cannot express is refused with the path to it, where JSON.stringify would
 * silently drop or mangle it (a function inside an object would come out as the text `undefined`). The path
 * is put together only when something is refused, so a value that is JSON pays nothing for it.
 */
import { CodecError } from '../errors/codec-error.js';

/** A UTF-16 surrogate without its pair: not Unicode, so not JSON text (RFC 8785 §3.2.2.2). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Thrown inside the walk; each level it passes adds its member's name or index to the path. */
class Unrepresentable {
  readonly path: (string | number)[] = [];
  constructor(readonly what: string) {}
}

function hasToJson(value: object): value is { toJSON: () => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/** Printable ASCII but the quote and the backslash: a string of only these is its JSON text as it is, quoted. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function jsonString(s: string): string {
  // Most strings of a job (keys, refs, timestamps, URIs, EPCs) are plain: one scan instead of two.
  if (PLAIN.test(s)) return '"' + s + '"';
  if (LONE_SURROGATE.test(s)) throw new Unrepresentable('a string with a lone surrogate');
  return JSON.stringify(s);
}

/**
 * The canonical text of `value`. Object members whose value is `undefined` are left out (as JSON.stringify
 * does, so optional TypeScript fields work); `toJSON()` is honoured (a `Date` becomes its ISO string).
 */
function write(value: unknown, seen: Set<object>): string {
  switch (typeof value) {
    case 'string':
      return jsonString(value);
    case 'number':
      // RFC 8785 §3.2.2.3: ECMAScript's serialisation; NaN and Infinity are not JSON numbers.
      if (!Number.isFinite(value)) throw new Unrepresentable(`number ${String(value)}`);
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      break;
    default:
      throw new Unrepresentable(typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`);
  }
  if (seen.has(value)) throw new Unrepresentable('a circular reference');
  if (hasToJson(value)) return write(value.toJSON(), seen);
  seen.add(value);
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (let i = 0; i < value.length; i++) {
      try {
        text += (i === 0 ? '' : ',') + write(value[i], seen);
      } catch (err) {
        if (err instanceof Unrepresentable) err.path.unshift(i);
        throw err;
      }
    }
    text += ']';
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new Unrepresentable('a non-plain object');
    const obj = value as Record<string, unknown>;
    const keys = inCodeUnitOrder(Object.keys(obj));
    text = '{';
    let first = true;
    for (const key of keys) {
      const member = obj[key];
      if (member === undefined) continue;
      try {
        text += (first ? '' : ',') + jsonString(key) + ':' + write(member, seen);
      } catch (err) {
        if (err instanceof Unrepresentable) err.path.unshift(key);
        throw err;
      }
      first = false;
    }
    text += '}';
  }
  seen.delete(value);
  return text;
}

/** Objects with at most this many members have them sorted in place by insertion. */
const INSERTION_SORT_MAX = 24;

/**
 * Sorts member names by UTF-16 code units, as RFC 8785 §3.2.3 orders members (and as `<` and Array.prototype.sort
 * compare strings). A few names, most objects' count, are sorted in place by insertion: the built-in sort copies
 * its array for every call, which was 6 % of all the bytes a sealed job allocated.
 */
function inCodeUnitOrder(keys: string[]): string[] {
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

const utf8 = new TextEncoder();

const pathText = (path: readonly (string | number)[]) =>
  '$' + path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('');

/**
 * The RFC 8785 canonical JSON text of a value. Throws `CodecError` `INVALID_JSON` for values JSON cannot
 * represent (undefined, functions, symbols, bigint, NaN/Infinity, cycles, class instances without
 * `toJSON`, strings with lone surrogates).
 *
 * @example
 * canonicalJson({ b: 2, a: [1, 'x'] }); // '{"a":[1,"x"],"b":2}'
 */
export function canonicalJson(value: unknown): string {
  try {
    return write(value, new Set());
  } catch (err) {
    if (!(err instanceof Unrepresentable)) throw err;
    const path = pathText(err.path);
    throw new CodecError('INVALID_JSON', `${err.what} at ${path} cannot be canonicalised as JSON`, {
      details: { path },
    });
  }
}

/**
 * The UTF-8 bytes of {@link canonicalJson}: what gets hashed or signed (RFC 8785 §3.2.4).
 *
 * @example
 * canonicalJsonBytes({ a: 'é' }); // Uint8Array [123, 34, 97, 34, 58, 34, 195, 169, 34, 125]
 */
export function canonicalJsonBytes(value: unknown): Uint8Array {
  return utf8.encode(canonicalJson(value));
}

/** Deeper than this, {@link inCanonicalOrder} leaves the answer to the walk (which also finds cycles). */
const ORDER_CHECK_DEPTH = 256;

/**
 * Whether JSON.stringify writes `value` as {@link canonicalJson} does: every object plain, its members in
 * UTF-16 code unit order as they are enumerated, none undefined; every string without a lone surrogate;
 * every number finite. JSON.stringify then differs from the walk in nothing (its numbers and strings are
 * the walk's own), so it writes the canonical text in one native call.
 */
function inCanonicalOrder(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      return sayable(value);
    case 'number':
      return Number.isFinite(value);
    case 'boolean':
      return true;
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > ORDER_CHECK_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!inCanonicalOrder(value[i], depth + 1)) return false;
    return true;
  }
  if (!isPlainJsonObject(value)) return false;
  let previous: string | undefined;
  // In the order JSON.stringify writes them (for...in lists a plain object's own keys in that order).
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
    if (previous !== undefined && !(previous < key)) return false;
    if (
      !inCanonicalOrder(key, depth) ||
      !inCanonicalOrder((value as Record<string, unknown>)[key], depth + 1)
    )
      return false;
    previous = key;
  }
  return true;
}

/**
 * Whether `text` is the canonical JSON text (RFC 8785) of `value`: `canonicalJson(value) === text`, throwing as it
 * does, with less work when `value` is `text` parsed. JSON.parse keeps the text's order of members (array indices
 * first): when that is code unit order, as in every canonical text without array-index keys, one JSON.stringify
 * call writes the value; any other value goes to the walk.
 *
 * @example
 * const text = '{"a":1,"b":[true]}';
 * isCanonicalJsonText(text, JSON.parse(text)); // true
 */
export function isCanonicalJsonText(text: string, value: unknown): boolean {
  return inCanonicalOrder(value, 0) ? JSON.stringify(value) === text : canonicalJson(value) === text;
}

/**
 * Whether two values have the same canonical JSON text (RFC 8785): `canonicalJson(a) === canonicalJson(b)`,
 * throwing as it does, without writing either text when they are the same. Two plain JSON values (as
 * JSON.parse makes them) are compared member by member in place: a member whose value is undefined counts as
 * absent, as the canonical text leaves it out. Anything else, and any difference, is answered by writing both
 * texts, so a value JSON cannot represent still throws, and what differs is judged exactly as before.
 *
 * @example
 * sameCanonicalJson({ a: 1, b: [true] }, { b: [true], a: 1 }); // true
 * sameCanonicalJson({ a: 1, c: undefined }, { a: 1 }); // true
 */
export function sameCanonicalJson(a: unknown, b: unknown): boolean {
  return plainlySame(a, b, 0) || canonicalJson(a) === canonicalJson(b);
}

/**
 * True when `a` and `b` are plain JSON values (finite numbers, strings without a lone surrogate, plain objects
 * and arrays, none undefined inside an array, no `toJSON`) that are equal as JSON; false for anything else.
 */
function plainlySame(a: unknown, b: unknown, depth: number): boolean {
  if (typeof a !== typeof b) return false;
  switch (typeof a) {
    case 'string':
      return a === b && sayable(a);
    case 'number':
      return a === b && Number.isFinite(a);
    case 'boolean':
      return a === b;
    case 'object':
      break;
    default:
      return false;
  }
  if (a === null || b === null) return a === b;
  if (depth > ORDER_CHECK_DEPTH) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!plainlySame(a[i], b[i], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainJsonObject(a as object) || !isPlainJsonObject(b as object)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const key in x) {
    if (!Object.prototype.hasOwnProperty.call(x, key)) return false;
    const value = x[key];
    if (value === undefined) continue;
    if (!sayable(key)) return false;
    if (!Object.prototype.hasOwnProperty.call(y, key) || !plainlySame(value, y[key], depth + 1)) return false;
    members += 1;
  }
  for (const key in y) {
    if (!Object.prototype.hasOwnProperty.call(y, key)) return false;
    if (y[key] !== undefined) members -= 1;
  }
  return members === 0;
}

/** A string JSON can say: no lone surrogate (most strings are plain ASCII: one scan instead of two). */
function sayable(s: string): boolean {
  return PLAIN.test(s) || !LONE_SURROGATE.test(s);
}

/** An object written member by member: plain (no class, no `toJSON`). */
function isPlainJsonObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && !hasToJson(value);
}
