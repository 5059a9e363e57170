import { createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { CodecError } from '../errors/codec-error.js';
import { readVectorJson } from '../testing/vectors.js';
import { base58btcDecode, base58btcEncode, multibaseBase58btcDecode } from './base58btc.js';
import {
  didKeyFromPublicKey,
  ed25519PublicKeyFromMultibase,
  publicKeyFromDidKey,
  verificationMethodId,
} from './did-key.js';

const keyPairSchema = z.object({
  id: z.string(),
  type: z.string(),
  publicKeyBase58: z.string().optional(),
  publicKeyJwk: z.object({ crv: z.string(), x: z.string() }).optional(),
});
const vectors = z
  .record(
    z.string(),
    z.object({ seed: z.string(), verificationKeyPair: keyPairSchema, keyAgreementKeyPair: keyPairSchema }),
  )
  .parse(readVectorJson('did-key/ed25519-x25519.json'));
const entries = Object.entries(vectors).map(([did, v]) => ({ did, ...v }));

/** The raw public key of a vector key pair, whichever way the vector writes it. */
function rawKey(pair: z.infer<typeof keyPairSchema>): Uint8Array {
  if (pair.publicKeyBase58 !== undefined) return base58btcDecode(pair.publicKeyBase58);
  if (pair.publicKeyJwk !== undefined) return new Uint8Array(Buffer.from(pair.publicKeyJwk.x, 'base64url'));
  throw new Error(`vector key ${pair.id} has no public key`);
}

/** Ed25519 public key from a 32-byte seed with node:crypto (RFC 8410 PKCS#8 wrapping). */
function publicKeyFromSeed(seedHex: string): Uint8Array {
  const der = Buffer.concat([
    Buffer.from('302e020100300506032b657004220420', 'hex'),
    Buffer.from(seedHex, 'hex'),
  ]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({
    format: 'jwk',
  });
  return new Uint8Array(Buffer.from(String(jwk.x), 'base64url'));
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

describe('did:key vectors (did-key/ed25519-x25519.json)', () => {
  it('has the five seeds', () => {
    expect(entries).toHaveLength(5);
  });

  it.each(entries)('$did <-> its Ed25519 verification key', ({ did, seed, verificationKeyPair }) => {
    const raw = rawKey(verificationKeyPair);
    expect(raw).toHaveLength(32);
    expect(didKeyFromPublicKey(raw)).toBe(did);
    expect(publicKeyFromDidKey(did)).toEqual(raw);
    if (verificationKeyPair.publicKeyBase58 !== undefined) {
      expect(base58btcEncode(publicKeyFromDidKey(did))).toBe(verificationKeyPair.publicKeyBase58);
    }
    // The seed really is the private key of this DID.
    expect(publicKeyFromSeed(seed)).toEqual(raw);
    // Relative ("#z6Mk...") or absolute, the vector's verification method is ours.
    const id = verificationKeyPair.id.startsWith('#')
      ? `${did}${verificationKeyPair.id}`
      : verificationKeyPair.id;
    expect(verificationMethodId(did)).toBe(id);
  });

  it.each(entries)(
    '$did: the X25519 key-agreement key is refused as another multicodec',
    ({ keyAgreementKeyPair }) => {
      const fragment = keyAgreementKeyPair.id.split('#')[1] ?? '';
      expect(fragment).toMatch(/^z6LS/);
      expect(codeOf(() => ed25519PublicKeyFromMultibase(fragment))).toBe('UNSUPPORTED_MULTICODEC');
      expect(codeOf(() => publicKeyFromDidKey(`did:key:${fragment}`))).toBe('UNSUPPORTED_MULTICODEC');
    },
  );
});

describe('publicKeyFromDidKey', () => {
  const did = 'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2';

  it.each([
    ['did:web', 'did:web:example.com', 'UNSUPPORTED_DID_METHOD'],
    ['did:example', 'did:example:123', 'UNSUPPORTED_DID_METHOD'],
    ['an https URL', 'https://vc.example/issuers/5678', 'INVALID_DID'],
    ['a DID URL with fragment', `${did}#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2`, 'INVALID_DID'],
    ['base64 multibase', 'did:key:mAAECAw', 'INVALID_DID'],
    ['no value', 'did:key:', 'INVALID_DID'],
    [
      'a 31-byte key',
      `did:key:z${base58btcEncode(Uint8Array.from([0xed, 0x01, ...new Uint8Array(31)]))}`,
      'INVALID_KEY',
    ],
    [
      'a 33-byte key',
      `did:key:z${base58btcEncode(Uint8Array.from([0xed, 0x01, ...new Uint8Array(33)]))}`,
      'INVALID_KEY',
    ],
    [
      'secp256k1 (0xe7)',
      `did:key:z${base58btcEncode(Uint8Array.from([0xe7, 0x01, ...new Uint8Array(33)]))}`,
      'UNSUPPORTED_MULTICODEC',
    ],
    [
      'P-256 (0x1200)',
      `did:key:z${base58btcEncode(Uint8Array.from([0x80, 0x24, ...new Uint8Array(33)]))}`,
      'UNSUPPORTED_MULTICODEC',
    ],
  ])('refuses %s', (_label, input, code) => {
    expect(codeOf(() => publicKeyFromDidKey(input))).toBe(code);
  });

  it('refuses a key that is not 32 bytes when building', () => {
    expect(codeOf(() => didKeyFromPublicKey(new Uint8Array(31)))).toBe('INVALID_KEY');
    expect(codeOf(() => verificationMethodId('did:web:example.com'))).toBe('UNSUPPORTED_DID_METHOD');
  });

  it('round-trips any 32-byte key (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (raw) => {
        const d = didKeyFromPublicKey(raw);
        expect(d).toMatch(/^did:key:z6Mk/);
        expect(publicKeyFromDidKey(d)).toEqual(raw);
      }),
    );
  });
});

describe('base58btc', () => {
  it('matches known encodings (draft-msporny-base58 examples)', () => {
    expect(base58btcEncode(new TextEncoder().encode('Hello World!'))).toBe('2NEpo7TZRRrLZSi2U');
    expect(base58btcEncode(new TextEncoder().encode('The quick brown fox jumps over the lazy dog.'))).toBe(
      'USm3fpXnKG5EUBx2ndxBDMPVciP5hGey2Jh4NDv6gmeo1LkMeiKrLJUUBk6Z',
    );
    expect(base58btcEncode(Uint8Array.from([0, 0, 0x28, 0x7f, 0xb4, 0xcd]))).toBe('11233QC4');
    expect(base58btcEncode(new Uint8Array(0))).toBe('');
  });

  it('round-trips any bytes, leading zeros included (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.nat({ max: 4 }), (bytes, zeros) => {
        const input = Uint8Array.from([...new Array<number>(zeros).fill(0), ...bytes]);
        const text = base58btcEncode(input);
        if (text === '') expect(input).toHaveLength(0);
        else expect(base58btcDecode(text)).toEqual(input);
      }),
    );
  });

  it.each(['0', 'O', 'I', 'l', '+', ' '])('refuses %j, which is not in the alphabet', (ch) => {
    expect(codeOf(() => base58btcDecode(`2N${ch}E`))).toBe('INVALID_BASE58');
  });

  it('refuses empty input', () => {
    expect(codeOf(() => base58btcDecode(''))).toBe('INVALID_BASE58');
  });

  it('refuses other multibase prefixes', () => {
    expect(codeOf(() => multibaseBase58btcDecode('f00ff'))).toBe('INVALID_BASE58');
  });
});
