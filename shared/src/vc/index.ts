/** Verifiable credentials: Data Integrity proofs with the eddsa-jcs-2022 cryptosuite. */
export {
  createProof,
  verifyProof,
  type CreateProofOptions,
  type ProofVerificationResult,
  type SecuredDocument,
  type VerifyProofOptions,
} from './proof.js';
export {
  DATA_INTEGRITY_PROOF,
  EDDSA_JCS_2022,
  eddsaJcs2022Hash,
  eddsaJcs2022ProofConfig,
  eddsaJcs2022Transform,
  type DataIntegrityProof,
} from './eddsa-jcs-2022.js';
export { issuerDid, resolveDidKeyVerificationMethod, verificationMethodDid } from './did-key-resolver.js';
export { ed25519PrivateKeyFromSeed, ed25519PublicKeyFromRaw, ed25519RawPublicKey } from './keys.js';
