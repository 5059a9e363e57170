/**
 * Base64 and UTF-8 helpers on web-standard APIs only (`atob`, `btoa`, `TextEncoder`), so this module
 * needs nothing from Node but `node:crypto`.
 */

/** Standard base64 (RFC 4648 §4) with padding, strictly: no whitespace, no URL-safe alphabet. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Standard base64 with padding.
 *
 * @example
 * base64Encode(new Uint8Array([1, 2, 3])); // 'AQID'
 */
export function base64Encode(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Decodes strict base64, or returns undefined.
 *
 * @example
 * base64Decode('AQID'); // Uint8Array [1, 2, 3]
 */
export function base64Decode(text: string): Uint8Array | undefined {
  if (!BASE64.test(text)) return undefined;
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}

/**
 * UTF-8 bytes of a string.
 *
 * @example
 * utf8('é'); // Uint8Array [195, 169]
 */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/**
 * The bytes of a raw body given as text (UTF-8) or bytes (as is).
 *
 * @example
 * bodyBytes('{}'); // Uint8Array [123, 125]
 */
export function bodyBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? utf8(body) : body;
}
