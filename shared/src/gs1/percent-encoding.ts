/**
 * Percent-encoding of AI values in GS1 Digital Link URI path segments.
 *
 * GS1 Digital Link: URI Syntax 1.x: an AI value is written in the path with every character outside the
 * RFC 3986 §2.3 "unreserved" set (`A-Z a-z 0-9 - . _ ~`) percent-encoded as `%HH` (RFC 3986 §2.1,
 * upper-case hex), so `/` becomes `%2F`, `!` becomes `%21` and so on. GS1's own gs1-syntax-engine does
 * exactly this. Note that `encodeURIComponent` is not enough: it leaves `!'()*` alone.
 */
import { CodecError } from '../errors/codec-error.js';

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/**
 * RFC 3986 §3.3 `pchar` characters that may appear literally in a path segment (unreserved, sub-delims,
 * `:` and `@`); `%` only as the start of an escape.
 */
const LITERAL_PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;

/**
 * Percent-encodes an AI value (ASCII, GS1 character set 82) for a Digital Link path segment.
 *
 * @example
 * encodeDigitalLinkValue('32a/b'); // '32a%2Fb'
 */
export function encodeDigitalLinkValue(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (code > 0x7e || code < 0x20) {
      // Character set 82 is printable ASCII; anything else is a caller bug, not something to encode.
      throw new CodecError(
        'INVALID_SERIAL',
        `cannot encode non-ASCII or control character in ${JSON.stringify(value)}`,
      );
    }
    out += UNRESERVED.test(ch) ? ch : `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Decodes one Digital Link path segment. Accepts upper- or lower-case escapes (RFC 3986 §2.1 says they
 * are equivalent) and literal `pchar` characters; rejects a stray `%`, escapes of non-ASCII bytes and
 * characters that cannot appear in a path segment. Throws `CodecError` `INVALID_SERIAL`.
 *
 * @example
 * decodeDigitalLinkValue('32a%2fb'); // '32a/b'
 */
export function decodeDigitalLinkValue(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i += 1) {
    const ch = segment.charAt(i);
    if (ch === '%') {
      const hex = segment.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) {
        throw new CodecError('INVALID_SERIAL', `malformed percent-escape in ${JSON.stringify(segment)}`);
      }
      const code = Number.parseInt(hex, 16);
      if (code < 0x20 || code > 0x7e) {
        throw new CodecError('INVALID_SERIAL', `escape %${hex} is not a printable ASCII character`);
      }
      out += String.fromCharCode(code);
      i += 2;
    } else if (LITERAL_PCHAR.test(ch)) {
      out += ch;
    } else {
      throw new CodecError(
        'INVALID_SERIAL',
        `character ${JSON.stringify(ch)} must be percent-encoded in a path`,
      );
    }
  }
  return out;
}
