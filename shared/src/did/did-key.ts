/**
 * did:key for Ed25519 public keys (W3C CCG "The did:key Method" v0.7, Format and Ed25519 sections): the method-specific
 * id is the multibase base58btc (`z`) of the multicodec `ed25519-pub` (0xed, varint bytes `ed 01`)
 * followed by the 32-byte key, so every Ed25519 did:key starts with `did:key:z6Mk`. The verification
 * method id is the DID with that same value as its fragment.
 */
import { CodecError } from '../errors/codec-error.js';
import { multibaseBase58btcDecode, multibaseBase58btcEncode } from './base58btc.js';

/** Multicodec `ed25519-pub` as its unsigned-varint bytes. */
const ED25519_PUB = [0xed, 0x01] as const;
const DID_KEY_PREFIX = 'did:key:';

/** Reads the leading unsigned varint (the multicodec code) for error messages. */
function leadingVarint(bytes: Uint8Array): number {
  let value = 0;
  for (let i = 0; i < Math.min(bytes.length, 4); i += 1) {
    const byte = bytes[i] ?? 0;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) break;
  }
  return value;
}

function assertRawKey(raw: Uint8Array): void {
  if (!(raw instanceof Uint8Array) || raw.length !== 32) {
    throw new CodecError('INVALID_KEY', 'an Ed25519 public key is 32 bytes');
  }
}

/**
 * The Multikey `publicKeyMultibase` of an Ed25519 public key: `z` + base58btc(0xed01 ‖ key).
 *
 * @example
 * ed25519PublicKeyMultibase(raw32); // 'z6Mk...'
 */
export function ed25519PublicKeyMultibase(raw32: Uint8Array): string {
  assertRawKey(raw32);
  return multibaseBase58btcEncode(Uint8Array.from([...ED25519_PUB, ...raw32]));
}

/**
 * The raw 32-byte Ed25519 key of a `z6Mk...` multibase value. Throws `CodecError` `INVALID_BASE58`,
 * `UNSUPPORTED_MULTICODEC` (an X25519 `z6LS...` key, a P-256 key, ...) or `INVALID_KEY`.
 *
 * @example
 * ed25519PublicKeyFromMultibase('z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2').length; // 32
 */
export function ed25519PublicKeyFromMultibase(multibase: string): Uint8Array {
  const bytes = multibaseBase58btcDecode(multibase);
  if (bytes[0] !== ED25519_PUB[0] || bytes[1] !== ED25519_PUB[1]) {
    throw new CodecError(
      'UNSUPPORTED_MULTICODEC',
      `multicodec 0x${leadingVarint(bytes).toString(16)} is not ed25519-pub (0xed)`,
    );
  }
  const raw = bytes.slice(2);
  assertRawKey(raw);
  return raw;
}

/**
 * The did:key of an Ed25519 public key.
 *
 * @example
 * didKeyFromPublicKey(raw32); // 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2'
 */
export function didKeyFromPublicKey(raw32: Uint8Array): string {
  return `${DID_KEY_PREFIX}${ed25519PublicKeyMultibase(raw32)}`;
}

/** The multibase value of a did:key DID (no path, query or fragment allowed). */
function didKeyValue(did: string): string {
  if (typeof did !== 'string' || !/^did:[a-z0-9]+:/.test(did)) {
    throw new CodecError('INVALID_DID', `not a DID: ${JSON.stringify(did)}`);
  }
  if (!did.startsWith(DID_KEY_PREFIX)) {
    throw new CodecError(
      'UNSUPPORTED_DID_METHOD',
      `only did:key is supported, got ${did.split(':', 2).join(':')}`,
    );
  }
  const value = did.slice(DID_KEY_PREFIX.length);
  if (!/^z[1-9A-HJ-NP-Za-km-z]+$/.test(value)) {
    throw new CodecError(
      'INVALID_DID',
      `did:key value must be multibase base58btc, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * The raw 32-byte Ed25519 public key of a did:key. Throws `CodecError` `INVALID_DID`,
 * `UNSUPPORTED_DID_METHOD` (did:web, ...) or `UNSUPPORTED_MULTICODEC` (a non-Ed25519 did:key).
 *
 * @example
 * publicKeyFromDidKey('did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2'); // Uint8Array(32)
 */
export function publicKeyFromDidKey(did: string): Uint8Array {
  return ed25519PublicKeyFromMultibase(didKeyValue(did));
}

/**
 * The id of the Ed25519 verification method of a did:key: `did:key:z6Mk...#z6Mk...`.
 *
 * @example
 * verificationMethodId('did:key:z6MkrJVn...'); // 'did:key:z6MkrJVn...#z6MkrJVn...'
 */
export function verificationMethodId(did: string): string {
  const value = didKeyValue(did);
  ed25519PublicKeyFromMultibase(value); // must really be an Ed25519 key
  return `${did}#${value}`;
}
