import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { z } from 'zod';
import { CodecError } from '../errors/codec-error.js';
import { didKeyFromPublicKey, verificationMethodId } from '../did/did-key.js';
import { multibaseBase58btcDecode, multibaseBase58btcEncode } from '../did/base58btc.js';
import { readVectorJson } from '../testing/vectors.js';
import { issuerDid, resolveDidKeyVerificationMethod, verificationMethodDid } from './did-key-resolver.js';
import { ed25519PrivateKeyFromSeed, ed25519RawPublicKey } from './keys.js';
import { createProof, verifyProof } from './proof.js';

const keyPair = z
  .object({ privateKeyMultibase: z.string() })
  .parse(readVectorJson('vc-di-eddsa/keyPair.json'));
const unsigned = z.record(z.string(), z.unknown()).parse(readVectorJson('vc-di-eddsa/unsigned.json'));

/** The W3C vector's key, used to issue a credential the service accepts: a did:key issuer. */
const seed = multibaseBase58btcDecode(keyPair.privateKeyMultibase).slice(2);
const did = didKeyFromPublicKey(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed)));
const vm = verificationMethodId(did);
const CREATED = '2025-01-02T03:04:05Z';
const didIssued: Record<string, unknown> = { ...unsigned, issuer: did };
const signed = createProof(didIssued, { privateKey: seed, verificationMethod: vm, created: CREATED });

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof CodecError ? err.code : 'NOT_A_CODEC_ERROR';
  }
  return undefined;
}

describe('a did:key-issued credential signed with the W3C vector key', () => {
  it('verifies, and its issuer DID is its verification method DID', () => {
    expect(did).toBe('did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2');
    expect(verifyProof(signed)).toEqual({ verified: true });
    expect(issuerDid(signed)).toBe(did);
    expect(verificationMethodDid(signed.proof)).toBe(did);
    expect(signed.proof).toMatchObject({
      type: 'DataIntegrityProof',
      cryptosuite: 'eddsa-jcs-2022',
      created: CREATED,
      verificationMethod: vm,
      proofPurpose: 'assertionMethod',
      '@context': unsigned['@context'],
    });
  });

  it('does not modify the unsigned document', () => {
    expect(didIssued).not.toHaveProperty('proof');
    expect(signed['credentialSubject']).toEqual(unsigned['credentialSubject']);
  });

  it('verifies whatever the member order of the received JSON (JCS)', () => {
    const reverseKeys = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(reverseKeys)
        : typeof value === 'object' && value !== null
          ? Object.fromEntries(
              Object.entries(value)
                .reverse()
                .map(([k, v]) => [k, reverseKeys(v)]),
            )
          : value;
    const reordered = reverseKeys(signed);
    expect(Object.keys(reordered as object)[0]).toBe('proof');
    expect(verifyProof(reordered)).toEqual({ verified: true });
  });

  const tampered: [string, unknown, string][] = [
    [
      'a changed subject',
      { ...signed, credentialSubject: { id: 'did:example:x', alumniOf: 'Other' } },
      'signature',
    ],
    ['an added member', { ...signed, extra: true }, 'signature'],
    [
      'another issuer',
      { ...signed, issuer: 'did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG' },
      'signature',
    ],
    [
      'a changed created',
      { ...signed, proof: { ...signed.proof, created: '2025-01-02T03:04:06Z' } },
      'signature',
    ],
    [
      "a proof without the document's @context",
      { ...signed, proof: { ...signed.proof, '@context': undefined } },
      'signature',
    ],
    [
      'a reordered document @context',
      { ...signed, '@context': [...(unsigned['@context'] as string[])].reverse() },
      '@context',
    ],
    [
      'another proofPurpose',
      { ...signed, proof: { ...signed.proof, proofPurpose: 'authentication' } },
      'proofPurpose',
    ],
    [
      "another did:key's verification method",
      {
        ...signed,
        proof: {
          ...signed.proof,
          verificationMethod: verificationMethodId(
            'did:key:z6MkjchhfUsD6mmvni8mCdXHw216Xrm9bQe2mBH1P5RDjVJG',
          ),
        },
      },
      'signature',
    ],
    [
      'a fragment that is not the key',
      { ...signed, proof: { ...signed.proof, verificationMethod: `${did}#key-1` } },
      'verification method',
    ],
    [
      'an https verification method',
      { ...signed, proof: { ...signed.proof, verificationMethod: 'https://vc.example/issuers/5678#key-1' } },
      'only did:key',
    ],
    [
      'a did:web verification method',
      { ...signed, proof: { ...signed.proof, verificationMethod: 'did:web:vc.example#key-1' } },
      'only did:key',
    ],
    [
      'another cryptosuite',
      { ...signed, proof: { ...signed.proof, cryptosuite: 'eddsa-rdfc-2022' } },
      'eddsa-jcs-2022',
    ],
    [
      'another proof type',
      { ...signed, proof: { ...signed.proof, type: 'Ed25519Signature2020' } },
      'eddsa-jcs-2022',
    ],
    ['no proofValue', { ...signed, proof: { ...signed.proof, proofValue: undefined } }, 'proofValue'],
    [
      'a truncated proofValue',
      { ...signed, proof: { ...signed.proof, proofValue: signed.proof.proofValue.slice(0, -3) } },
      '64-byte',
    ],
    [
      'a base64 proofValue',
      { ...signed, proof: { ...signed.proof, proofValue: `u${'A'.repeat(86)}` } },
      'multibase',
    ],
    ['a bad created', { ...signed, proof: { ...signed.proof, created: 'yesterday' } }, 'dateTime'],
    ['a proof set', { ...signed, proof: [signed.proof] }, 'proof sets'],
    ['no proof', didIssued, 'no proof'],
    ['a string', 'not a credential', 'JSON object'],
    ['null', null, 'JSON object'],
  ];
  it.each(tampered)('refuses %s', (_label, doc, reason) => {
    const result = verifyProof(doc);
    expect(result.verified).toBe(false);
    expect(result.reason).toContain(reason);
  });

  it('checks the expected proof purpose', () => {
    const auth = createProof(didIssued, {
      privateKey: seed,
      verificationMethod: vm,
      proofPurpose: 'authentication',
      created: CREATED,
    });
    expect(verifyProof(auth).verified).toBe(false);
    expect(verifyProof(auth, { expectedProofPurpose: 'authentication' })).toEqual({ verified: true });
  });

  it('signs a document without @context with a proof without @context', () => {
    const bare = createProof(
      { hello: 'world' },
      { privateKey: seed, verificationMethod: vm, created: CREATED },
    );
    expect(bare.proof).not.toHaveProperty('@context');
    expect(verifyProof(bare)).toEqual({ verified: true });
  });

  it('defaults created to now, to the second, in UTC', () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const fresh = createProof(didIssued, { privateKey: seed, verificationMethod: vm });
    expect(fresh.proof.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(fresh.proof.created ?? '')).toBeGreaterThanOrEqual(before);
    expect(verifyProof(fresh)).toEqual({ verified: true });
  });
});

describe('createProof refuses', () => {
  const other = generateKeyPairSync('ed25519');
  it.each([
    [
      'a document that already has a proof',
      () => createProof(signed, { privateKey: seed, verificationMethod: vm }),
      'INVALID_DOCUMENT',
    ],
    [
      'an array document',
      () => createProof([1], { privateKey: seed, verificationMethod: vm }),
      'INVALID_DOCUMENT',
    ],
    [
      'a key that is not the did:key of the method',
      () => createProof(didIssued, { privateKey: other.privateKey, verificationMethod: vm }),
      'INVALID_KEY',
    ],
    [
      'a public key',
      () => createProof(didIssued, { privateKey: other.publicKey, verificationMethod: vm }),
      'INVALID_KEY',
    ],
    [
      'an X25519 key',
      () =>
        createProof(didIssued, {
          privateKey: generateKeyPairSync('x25519').privateKey,
          verificationMethod: vm,
        }),
      'INVALID_KEY',
    ],
    [
      'a 31-byte seed',
      () => createProof(didIssued, { privateKey: seed.slice(1), verificationMethod: vm }),
      'INVALID_KEY',
    ],
    [
      'an empty verification method',
      () => createProof(didIssued, { privateKey: seed, verificationMethod: '' }),
      'INVALID_PROOF_OPTIONS',
    ],
    [
      'a created that is not a dateTime',
      () =>
        createProof(didIssued, { privateKey: seed, verificationMethod: vm, created: '2025-13-01T00:00:00Z' }),
      'INVALID_PROOF_OPTIONS',
    ],
    [
      'a value JSON cannot carry',
      () => createProof({ n: Number.NaN }, { privateKey: seed, verificationMethod: vm }),
      'INVALID_JSON',
    ],
  ])('%s', (_label, fn, code) => {
    expect(codeOf(fn)).toBe(code);
  });

  it('but signs for a non-did:key method, which verifyProof then cannot resolve offline', () => {
    const webSigned = createProof(didIssued, {
      privateKey: seed,
      verificationMethod: 'did:web:vc.example#key-1',
      created: CREATED,
    });
    expect(verifyProof(webSigned).reason).toContain('only did:key');
  });
});

describe('DID helpers', () => {
  it('issuerDid reads a string or an object issuer, and only returns DIDs', () => {
    expect(issuerDid({ issuer: { id: did, name: 'Acme' } })).toBe(did);
    expect(issuerDid({ issuer: 'did:web:example.com' })).toBe('did:web:example.com');
    expect(issuerDid({ issuer: `${did}#frag` })).toBeUndefined();
    expect(issuerDid({ issuer: 'https://vc.example/issuers/5678' })).toBeUndefined();
    expect(issuerDid({ issuer: 42 })).toBeUndefined();
    expect(issuerDid({})).toBeUndefined();
    expect(issuerDid(null)).toBeUndefined();
  });

  it('verificationMethodDid strips the fragment and only returns DIDs', () => {
    expect(verificationMethodDid({ verificationMethod: 'did:web:example.com:issuers:1#key-1' })).toBe(
      'did:web:example.com:issuers:1',
    );
    expect(verificationMethodDid({ verificationMethod: 'https://vc.example/keys#1' })).toBeUndefined();
    expect(verificationMethodDid({})).toBeUndefined();
    expect(verificationMethodDid('did:key:x')).toBeUndefined();
  });

  it('resolveDidKeyVerificationMethod needs the fragment to repeat the key', () => {
    expect(resolveDidKeyVerificationMethod(vm)).toHaveLength(32);
    expect(codeOf(() => resolveDidKeyVerificationMethod(did))).toBe('INVALID_DID');
    expect(codeOf(() => resolveDidKeyVerificationMethod('did:web:x#k'))).toBe('UNSUPPORTED_DID_METHOD');
  });
});

describe('properties', () => {
  const json = fc.jsonValue({ maxDepth: 3 });
  it('any credential subject signs and verifies; any change to it breaks the proof', () => {
    fc.assert(
      fc.property(json, json, (subject, otherSubject) => {
        const doc = { ...didIssued, credentialSubject: { id: 'did:example:s', claim: subject } };
        const s = createProof(doc, { privateKey: seed, verificationMethod: vm, created: CREATED });
        // What travels over the wire is JSON text: verify the parsed copy.
        expect(verifyProof(JSON.parse(JSON.stringify(s)))).toEqual({ verified: true });
        const changed = { ...s, credentialSubject: { id: 'did:example:s', claim: otherSubject } };
        const same =
          JSON.stringify(JSON.parse(JSON.stringify(subject))) ===
          JSON.stringify(JSON.parse(JSON.stringify(otherSubject)));
        fc.pre(!same);
        expect(verifyProof(JSON.parse(JSON.stringify(changed))).verified).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it('a fresh key signs and verifies, and the proofValue is 64 bytes', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const freshDid = didKeyFromPublicKey(ed25519RawPublicKey(publicKey));
    const s = createProof(
      { ...unsigned, issuer: freshDid },
      { privateKey, verificationMethod: verificationMethodId(freshDid) },
    );
    expect(multibaseBase58btcDecode(s.proof.proofValue)).toHaveLength(64);
    expect(multibaseBase58btcEncode(multibaseBase58btcDecode(s.proof.proofValue))).toBe(s.proof.proofValue);
    expect(verifyProof(s)).toEqual({ verified: true });
  });
});
