/** RFC 8785 (JCS) canonical JSON and the SHA-256 hashes the proof's links are made of. */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** The RFC 8785 canonical JSON of a parsed JSON value. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value cannot be canonicalised as JSON');
  return text;
}

/** Lower-case hex SHA-256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}
