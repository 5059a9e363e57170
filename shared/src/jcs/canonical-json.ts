/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * A thin typed wrapper around the `canonicalize` package (RFC 8785 §3.2: object members sorted by UTF-16
 * code units, ECMAScript number serialisation, minimal string escaping). The wrapper first checks that
 * the value really is JSON, because `canonicalize` (like `JSON.stringify`) silently drops or mangles
 * what JSON cannot express: a function inside an object would come out as the text `undefined`.
 */
import canonicalize from 'canonicalize';
import { CodecError } from '../errors/codec-error.js';

function fail(path: string, what: string): never {
  throw new CodecError('INVALID_JSON', `${what} at ${path} cannot be canonicalised as JSON`, {
    details: { path },
  });
}

function hasToJson(value: object): value is { toJSON: () => unknown } {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

/**
 * Returns a plain JSON copy of `value`, or throws on anything JSON cannot carry. Object members whose
 * value is `undefined` are left out (as `JSON.stringify` does, so optional TypeScript fields work);
 * `toJSON()` is honoured (a `Date` becomes its ISO string).
 */
function toPlainJson(value: unknown, path: string, seen: Set<object>): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') {
    // RFC 8785 §3.2.2.3: NaN and Infinity are not JSON numbers.
    return Number.isFinite(value) ? value : fail(path, `number ${String(value)}`);
  }
  if (typeof value !== 'object')
    return fail(path, typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`);
  if (seen.has(value)) fail(path, 'a circular reference');
  if (hasToJson(value)) return toPlainJson(value.toJSON(), path, seen);

  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) {
    out = value.map((item: unknown, i) => toPlainJson(item, `${path}[${i}]`, seen));
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) fail(path, 'a non-plain object');
    // A null-prototype object, so a member named "__proto__" (legal JSON) stays a member.
    const obj = Object.create(null) as Record<string, unknown>;
    for (const [key, member] of Object.entries(value)) {
      if (member !== undefined) obj[key] = toPlainJson(member, `${path}.${key}`, seen);
    }
    out = obj;
  }
  seen.delete(value);
  return out;
}

/**
 * The RFC 8785 canonical JSON text of a value. Throws `CodecError` `INVALID_JSON` for values JSON cannot
 * represent (undefined, functions, symbols, bigint, NaN/Infinity, cycles, class instances without
 * `toJSON`, strings with lone surrogates).
 *
 * @example
 * canonicalJson({ b: 2, a: [1, 'x'] }); // '{"a":[1,"x"],"b":2}'
 */
export function canonicalJson(value: unknown): string {
  const plain = toPlainJson(value, '$', new Set());
  let text: string | undefined;
  try {
    text = canonicalize(plain);
  } catch (cause) {
    // canonicalize refuses lone surrogates (RFC 8785 §3.2.2.2 requires valid Unicode).
    throw new CodecError('INVALID_JSON', `cannot canonicalise: ${(cause as Error).message}`, { cause });
  }
  if (text === undefined) throw new CodecError('INVALID_JSON', 'value has no JSON representation');
  return text;
}

/**
 * The UTF-8 bytes of {@link canonicalJson}: what gets hashed or signed (RFC 8785 §3.2.4).
 *
 * @example
 * canonicalJsonBytes({ a: 'é' }); // Uint8Array [123, 34, 97, 34, 58, 34, 195, 169, 34, 125]
 */
export function canonicalJsonBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalJson(value));
}
