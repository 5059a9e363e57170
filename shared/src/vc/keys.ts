/**
 * Ed25519 keys as node:crypto `KeyObject`s, from and to raw 32-byte values.
 *
 * RFC 8410 §7 (PKCS#8) and §4 (SubjectPublicKeyInfo) wrap raw Ed25519 keys in fixed DER prefixes, which is
 * how a raw seed or public key becomes a `KeyObject` without any other library.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { CodecError } from '../errors/codec-error.js';

const PKCS8_ED25519_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);
const SPKI_ED25519_PREFIX = Uint8Array.from([
  0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
]);

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * A private Ed25519 `KeyObject` from a raw 32-byte seed (RFC 8032 §5.1.5 private key).
 *
 * @example
 * const key = ed25519PrivateKeyFromSeed(crypto.getRandomValues(new Uint8Array(32)));
 */
export function ed25519PrivateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) {
    throw new CodecError('INVALID_KEY', 'an Ed25519 seed is 32 bytes');
  }
  return createPrivateKey({
    key: Buffer.from(concat(PKCS8_ED25519_PREFIX, seed)),
    format: 'der',
    type: 'pkcs8',
  });
}

/**
 * A public Ed25519 `KeyObject` from the raw 32-byte key.
 *
 * @example
 * const key = ed25519PublicKeyFromRaw(publicKeyFromDidKey(did));
 */
export function ed25519PublicKeyFromRaw(raw32: Uint8Array): KeyObject {
  if (!(raw32 instanceof Uint8Array) || raw32.length !== 32) {
    throw new CodecError('INVALID_KEY', 'an Ed25519 public key is 32 bytes');
  }
  return createPublicKey({
    key: Buffer.from(concat(SPKI_ED25519_PREFIX, raw32)),
    format: 'der',
    type: 'spki',
  });
}

/**
 * Accepts a private Ed25519 `KeyObject` or a raw seed; refuses public keys and other curves (`INVALID_KEY`).
 *
 * @example
 * toEd25519PrivateKey(seed32).asymmetricKeyType; // 'ed25519'
 */
export function toEd25519PrivateKey(key: KeyObject | Uint8Array): KeyObject {
  if (key instanceof Uint8Array) return ed25519PrivateKeyFromSeed(key);
  if (key.type !== 'private' || key.asymmetricKeyType !== 'ed25519') {
    throw new CodecError(
      'INVALID_KEY',
      `expected a private Ed25519 key, got a ${key.type} ${key.asymmetricKeyType ?? ''} key`,
    );
  }
  return key;
}

/**
 * The raw 32-byte public key of a private or public Ed25519 `KeyObject`.
 *
 * @example
 * didKeyFromPublicKey(ed25519RawPublicKey(privateKey));
 */
export function ed25519RawPublicKey(key: KeyObject): Uint8Array {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  if (publicKey.asymmetricKeyType !== 'ed25519') {
    throw new CodecError('INVALID_KEY', 'not an Ed25519 key');
  }
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return new Uint8Array(der.subarray(SPKI_ED25519_PREFIX.length));
}
