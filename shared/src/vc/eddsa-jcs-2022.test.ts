/**
 * Reproduces every intermediate value of the W3C vc-di-eddsa test vector for eddsa-jcs-2022
 * (Appendix B.3) from keyPair.json and unsigned.json.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { multibaseBase58btcDecode } from '../did/base58btc.js';
import { readVectorJson, readVectorText } from '../testing/vectors.js';
import { eddsaJcs2022Hash, eddsaJcs2022ProofConfig, eddsaJcs2022Transform } from './eddsa-jcs-2022.js';
import { issuerDid, verificationMethodDid } from './did-key-resolver.js';
import { ed25519PrivateKeyFromSeed, ed25519RawPublicKey } from './keys.js';
import { createProof, verifyProof } from './proof.js';

const DIR = 'vc-di-eddsa/eddsa-jcs-2022';
const keyPair = z
  .object({ publicKeyMultibase: z.string(), privateKeyMultibase: z.string() })
  .parse(readVectorJson('vc-di-eddsa/keyPair.json'));
const unsigned = z.record(z.string(), z.unknown()).parse(readVectorJson('vc-di-eddsa/unsigned.json'));
const proofConfig = z
  .object({ type: z.string(), cryptosuite: z.string(), created: z.string(), verificationMethod: z.string() })
  .loose()
  .parse(readVectorJson(`${DIR}/proofConfigJCS.json`));
const signedVector = z
  .object({ proof: z.record(z.string(), z.unknown()) })
  .loose()
  .parse(readVectorJson(`${DIR}/signedJCS.json`));
const text = (name: string): string => readVectorText(`${DIR}/${name}`);
const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** Multikey private key: multicodec ed25519-priv (0x1300, varint 80 26) followed by the 32-byte seed. */
function seedFromMultibase(multibase: string): Uint8Array {
  const bytes = multibaseBase58btcDecode(multibase);
  expect([...bytes.slice(0, 2)]).toEqual([0x80, 0x26]);
  return bytes.slice(2);
}
const seed = seedFromMultibase(keyPair.privateKeyMultibase);

describe('W3C vc-di-eddsa eddsa-jcs-2022 vector', () => {
  it('the key pair is consistent: the seed derives the public key', () => {
    const publicKey = multibaseBase58btcDecode(keyPair.publicKeyMultibase);
    expect([...publicKey.slice(0, 2)]).toEqual([0xed, 0x01]);
    expect(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed))).toEqual(publicKey.slice(2));
  });

  it('canonDocJCS and docHashJCS: transformation (§3.3.3)', () => {
    const canonical = eddsaJcs2022Transform(unsigned, proofConfig);
    expect(canonical).toBe(text('canonDocJCS.txt'));
    expect(sha256Hex(canonical)).toBe(text('docHashJCS.txt'));
  });

  it('proofCanonJCS and proofHashJCS: proof configuration (§3.3.5)', () => {
    const canonical = eddsaJcs2022ProofConfig(proofConfig);
    expect(canonical).toBe(text('proofCanonJCS.txt'));
    expect(sha256Hex(canonical)).toBe(text('proofHashJCS.txt'));
  });

  it('combinedHashJCS: proof hash then document hash (§3.3.4)', () => {
    const hashData = eddsaJcs2022Hash(text('canonDocJCS.txt'), text('proofCanonJCS.txt'));
    expect(hex(hashData)).toBe(text('combinedHashJCS.txt'));
  });

  it('proofConfigJCS, sigHexJCS, sigBTC58JCS and signedJCS: createProof (§3.3.1)', () => {
    const signed = createProof(unsigned, {
      privateKey: seed,
      verificationMethod: proofConfig.verificationMethod,
      proofPurpose: 'assertionMethod',
      created: proofConfig.created,
    });
    const { proofValue, ...config } = signed.proof;
    expect(config).toEqual(proofConfig);
    expect(hex(multibaseBase58btcDecode(proofValue))).toBe(text('sigHexJCS.txt'));
    expect(proofValue).toBe(text('sigBTC58JCS.txt'));
    expect(signed).toEqual(signedVector);
    // A node KeyObject gives the same (Ed25519 is deterministic), and a Date for created works.
    const again = createProof(unsigned, {
      privateKey: ed25519PrivateKeyFromSeed(seed),
      verificationMethod: proofConfig.verificationMethod,
      created: new Date(proofConfig.created),
    });
    expect(again).toEqual(signedVector);
  });

  it('signedJCS verifies (§3.3.2), but its issuer is an https URL, not a DID', () => {
    expect(verifyProof(signedVector)).toEqual({ verified: true });
    expect(issuerDid(signedVector)).toBeUndefined();
    expect(verificationMethodDid(signedVector.proof)).toBe(
      'did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2',
    );
  });

  it('signedJCS with one changed character does not verify', () => {
    expect(verifyProof({ ...signedVector, name: 'Alumni Credentiak' })).toEqual({
      verified: false,
      reason: 'the signature does not match the document',
    });
  });
});
