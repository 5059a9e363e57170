/**
 * Creating and verifying eddsa-jcs-2022 Data Integrity proofs (W3C vc-di-eddsa 1.0 §3.3.1 and §3.3.2).
 */
import { sign, verify, type KeyObject } from 'node:crypto';
import { CodecError } from '../errors/codec-error.js';
import { sameCanonicalJson } from '../jcs/canonical-json.js';
import { multibaseBase58btcDecode, multibaseBase58btcEncode } from '../did/base58btc.js';
import { resolveDidKeyVerificationMethod } from './did-key-resolver.js';
import {
  DATA_INTEGRITY_PROOF,
  EDDSA_JCS_2022,
  eddsaJcs2022Hash,
  eddsaJcs2022ProofConfig,
  eddsaJcs2022Transform,
  type DataIntegrityProof,
} from './eddsa-jcs-2022.js';
import { ed25519PublicKeyFromRaw, ed25519RawPublicKey, toEd25519PrivateKey } from './keys.js';

export interface CreateProofOptions {
  /** The issuer's private Ed25519 key: a node `KeyObject` or the raw 32-byte seed. */
  privateKey: KeyObject | Uint8Array;
  /** The verification method id, e.g. `did:key:z6Mk...#z6Mk...` (see `verificationMethodId`). */
  verificationMethod: string;
  /** Default `assertionMethod`, the purpose of credential issuance. */
  proofPurpose?: string;
  /** XML Schema dateTime; default now, to the second, in UTC. */
  created?: string | Date;
}

export interface VerifyProofOptions {
  /** The proof purpose the verifier expects (VC Data Integrity 1.0 §4.3 step 5). Default `assertionMethod`. */
  expectedProofPurpose?: string;
}

/** The outcome of {@link verifyProof}: `reason` says why when not verified. */
export interface ProofVerificationResult {
  verified: boolean;
  reason?: string;
}

/** A document secured by one eddsa-jcs-2022 proof. */
export type SecuredDocument<T extends object> = T & { proof: DataIntegrityProof };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function formatCreated(created: string | Date | undefined): string {
  const date = created ?? new Date();
  // Second precision, as every example of the specification; canonical UTC form.
  return typeof date === 'string' ? date : date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Signs a document with eddsa-jcs-2022 (vc-di-eddsa §3.3.1) and returns a copy with the `proof` added
 * (VC Data Integrity "add proof"). The proof copies the document's `@context` (§3.3.1 step 2). When the
 * verification method is a did:key, the private key must match it. Throws `CodecError`
 * (`INVALID_DOCUMENT`, `INVALID_PROOF_OPTIONS`, `INVALID_KEY`, `INVALID_JSON`).
 *
 * @example
 * const signed = createProof(unsignedVc, {
 *   privateKey: seed32,
 *   verificationMethod: verificationMethodId(issuerDid),
 *   created: '2023-02-24T23:36:38Z',
 * });
 * signed.proof.proofValue; // 'z2HnFSSP...'
 */
export function createProof<T extends object>(
  unsignedDoc: T,
  options: CreateProofOptions,
): SecuredDocument<T> {
  if (!isPlainObject(unsignedDoc)) throw new CodecError('INVALID_DOCUMENT', 'the document is a JSON object');
  if ('proof' in unsignedDoc) {
    throw new CodecError(
      'INVALID_DOCUMENT',
      'the document already has a proof; proof sets are not supported',
    );
  }
  const privateKey = toEd25519PrivateKey(options.privateKey);
  if (typeof options.verificationMethod !== 'string' || options.verificationMethod === '') {
    throw new CodecError('INVALID_PROOF_OPTIONS', 'verificationMethod is required');
  }
  if (options.verificationMethod.startsWith('did:key:')) {
    const expected = resolveDidKeyVerificationMethod(options.verificationMethod);
    const actual = ed25519RawPublicKey(privateKey);
    if (expected.length !== actual.length || expected.some((byte, i) => byte !== actual[i])) {
      throw new CodecError('INVALID_KEY', `the private key does not belong to ${options.verificationMethod}`);
    }
  }

  const proof: Record<string, unknown> = {
    type: DATA_INTEGRITY_PROOF,
    cryptosuite: EDDSA_JCS_2022,
    created: formatCreated(options.created),
    verificationMethod: options.verificationMethod,
    proofPurpose: options.proofPurpose ?? 'assertionMethod',
  };
  if (unsignedDoc['@context'] !== undefined) proof['@context'] = unsignedDoc['@context'];

  const canonicalProofConfig = eddsaJcs2022ProofConfig(proof);
  const transformed = eddsaJcs2022Transform(unsignedDoc, proof);
  const hashData = eddsaJcs2022Hash(transformed, canonicalProofConfig);
  // §3.3.6: Ed25519 (pure EdDSA, RFC 8032) over hashData; node's sign(null, ...) is pure Ed25519.
  const proofBytes = sign(null, hashData, privateKey);
  return {
    ...unsignedDoc,
    proof: { ...proof, proofValue: multibaseBase58btcEncode(proofBytes) } as unknown as DataIntegrityProof,
  };
}

/** `@context` of the document must start with every value of the proof's `@context`, in order (§3.3.2 step 4). */
function contextStartsWith(documentContext: unknown, proofContext: unknown): boolean {
  const doc = Array.isArray(documentContext) ? documentContext : [documentContext];
  const proof = Array.isArray(proofContext) ? proofContext : [proofContext];
  return proof.every((value: unknown, i) => i < doc.length && sameCanonicalJson(doc[i], value));
}

function checkProof(securedDocument: unknown, options: VerifyProofOptions): ProofVerificationResult {
  if (!isPlainObject(securedDocument))
    return { verified: false, reason: 'the document is not a JSON object' };
  const proof = securedDocument['proof'];
  if (Array.isArray(proof)) return { verified: false, reason: 'proof sets are not supported' };
  if (!isPlainObject(proof)) return { verified: false, reason: 'the document has no proof' };
  if (proof['type'] !== DATA_INTEGRITY_PROOF || proof['cryptosuite'] !== EDDSA_JCS_2022) {
    return {
      verified: false,
      reason: 'the proof is not a DataIntegrityProof with cryptosuite eddsa-jcs-2022',
    };
  }
  const expectedPurpose = options.expectedProofPurpose ?? 'assertionMethod';
  if (proof['proofPurpose'] !== expectedPurpose) {
    return {
      verified: false,
      reason: `proofPurpose is ${JSON.stringify(proof['proofPurpose'])}, not ${expectedPurpose}`,
    };
  }
  const { proofValue, ...proofOptions } = proof;
  if (typeof proofValue !== 'string') return { verified: false, reason: 'proofValue is missing' };
  const verificationMethod = proofOptions['verificationMethod'];
  if (typeof verificationMethod !== 'string' || !verificationMethod.startsWith('did:key:')) {
    return {
      verified: false,
      reason: `verification method ${JSON.stringify(verificationMethod)} is not a did:key; only did:key is resolved offline`,
    };
  }
  const publicKey = ed25519PublicKeyFromRaw(resolveDidKeyVerificationMethod(verificationMethod));
  const proofBytes = multibaseBase58btcDecode(proofValue);
  if (proofBytes.length !== 64)
    return { verified: false, reason: 'proofValue is not a 64-byte Ed25519 signature' };

  const { proof: _proof, ...unsecuredDocument } = securedDocument;
  if (proofOptions['@context'] !== undefined) {
    if (!contextStartsWith(unsecuredDocument['@context'], proofOptions['@context'])) {
      return { verified: false, reason: "the document's @context does not start with the proof's @context" };
    }
    unsecuredDocument['@context'] = proofOptions['@context'];
  }
  const transformed = eddsaJcs2022Transform(unsecuredDocument, proofOptions);
  const canonicalProofConfig = eddsaJcs2022ProofConfig(proofOptions);
  const hashData = eddsaJcs2022Hash(transformed, canonicalProofConfig);
  return verify(null, hashData, publicKey, proofBytes)
    ? { verified: true }
    : { verified: false, reason: 'the signature does not match the document' };
}

/**
 * Verifies the eddsa-jcs-2022 proof of a secured document (vc-di-eddsa §3.3.2). Only did:key
 * verification methods are resolved (offline); any other method is "not verified" with a reason.
 * Never throws: malformed input is reported as `{ verified: false, reason }`.
 *
 * @example
 * verifyProof(signedVc); // { verified: true }
 * verifyProof({ ...signedVc, name: 'changed' }); // { verified: false, reason: 'the signature does not match ...' }
 */
export function verifyProof(signedDoc: unknown, options: VerifyProofOptions = {}): ProofVerificationResult {
  try {
    return checkProof(signedDoc, options);
  } catch (err) {
    // Fail closed: a malformed key, proofValue or document is "not verified", never an exception.
    return { verified: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
