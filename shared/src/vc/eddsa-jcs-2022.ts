/**
 * The eddsa-jcs-2022 cryptosuite steps (W3C vc-di-eddsa 1.0 §3.3), each a pure function so tests can
 * check every intermediate value of the specification's test vector (Appendix B.3).
 */
import { createHash } from 'node:crypto';
import { CodecError } from '../errors/codec-error.js';
import { canonicalJson } from '../jcs/canonical-json.js';

export const DATA_INTEGRITY_PROOF = 'DataIntegrityProof';
export const EDDSA_JCS_2022 = 'eddsa-jcs-2022';

/** A Data Integrity proof made by this cryptosuite (VC Data Integrity 1.0 §2.1). */
export interface DataIntegrityProof {
  type: typeof DATA_INTEGRITY_PROOF;
  cryptosuite: typeof EDDSA_JCS_2022;
  created?: string;
  verificationMethod: string;
  proofPurpose: string;
  '@context'?: unknown;
  proofValue: string;
}

/** XML Schema 1.1 Part 2 §3.3.7 dateTime (timezone optional), as §3.3.5 requires of `created`. */
const XSD_DATE_TIME =
  /^-?[0-9]{4,}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-](0[0-9]|1[0-3]):[0-5][0-9]|[+-]14:00)?$/;

/**
 * True for an XML Schema dateTime such as the `created` of a proof.
 *
 * @example
 * isXsdDateTime('2023-02-24T23:36:38Z'); // true
 */
export function isXsdDateTime(value: string): boolean {
  return XSD_DATE_TIME.test(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * §3.3.3 Transformation: the RFC 8785 canonical form of the unsecured document. The options must name
 * DataIntegrityProof / eddsa-jcs-2022.
 *
 * @example
 * eddsaJcs2022Transform(unsignedVc, { type: 'DataIntegrityProof', cryptosuite: 'eddsa-jcs-2022' });
 * // '{"@context":[...],"credentialSubject":{...},...}'
 */
export function eddsaJcs2022Transform(unsecuredDocument: unknown, options: Record<string, unknown>): string {
  // The specification's wording is "type is not ... and cryptosuite is not ..."; both must match.
  if (options['type'] !== DATA_INTEGRITY_PROOF || options['cryptosuite'] !== EDDSA_JCS_2022) {
    throw new CodecError(
      'INVALID_PROOF_OPTIONS',
      'transformation needs type DataIntegrityProof, eddsa-jcs-2022',
    );
  }
  return canonicalJson(unsecuredDocument);
}

/**
 * §3.3.5 Proof Configuration: validates the proof options (type, cryptosuite, `created` as an XML Schema
 * dateTime) and returns their canonical JSON (the proof without `proofValue`, `@context` included when
 * present).
 *
 * @example
 * eddsaJcs2022ProofConfig({ type: 'DataIntegrityProof', cryptosuite: 'eddsa-jcs-2022', created: '2023-02-24T23:36:38Z',
 *   verificationMethod: 'did:key:z6Mk...#z6Mk...', proofPurpose: 'assertionMethod', '@context': [...] });
 */
export function eddsaJcs2022ProofConfig(proofOptions: Record<string, unknown>): string {
  if (!isRecord(proofOptions)) throw new CodecError('INVALID_PROOF_OPTIONS', 'proof options are an object');
  if (proofOptions['type'] !== DATA_INTEGRITY_PROOF || proofOptions['cryptosuite'] !== EDDSA_JCS_2022) {
    throw new CodecError(
      'INVALID_PROOF_OPTIONS',
      'proof type must be DataIntegrityProof with eddsa-jcs-2022',
    );
  }
  const created = proofOptions['created'];
  if (created !== undefined && (typeof created !== 'string' || !isXsdDateTime(created))) {
    throw new CodecError(
      'INVALID_PROOF_OPTIONS',
      `created ${JSON.stringify(created)} is not an XML Schema dateTime`,
    );
  }
  if ('proofValue' in proofOptions) {
    throw new CodecError('INVALID_PROOF_OPTIONS', 'proof options must not contain proofValue');
  }
  return canonicalJson(proofOptions);
}

/**
 * §3.3.4 Hashing: SHA-256(canonical proof configuration) ‖ SHA-256(transformed document), 64 bytes.
 * Note the order: the proof configuration hash comes first.
 *
 * @example
 * eddsaJcs2022Hash(canonicalDocument, canonicalProofConfig).length; // 64
 */
export function eddsaJcs2022Hash(transformedDocument: string, canonicalProofConfig: string): Uint8Array {
  const proofConfigHash = createHash('sha256').update(canonicalProofConfig, 'utf8').digest();
  const transformedDocumentHash = createHash('sha256').update(transformedDocument, 'utf8').digest();
  const out = new Uint8Array(64);
  out.set(proofConfigHash, 0);
  out.set(transformedDocumentHash, 32);
  return out;
}
