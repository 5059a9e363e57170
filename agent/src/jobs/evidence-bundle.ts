/**
 * The evidence bundle of SEALED: a compact JWS (EdDSA, `typ: dpp-evidence+jws`, `kid` = the device key's
 * thumbprint) signed by the device key over the canonical JSON (RFC 8785) of everything the attempt
 * reported. `envelopeJti` is the jti of the envelope of the claim (heartbeats carry other jtis).
 */
import { CompactSign } from 'jose';
import {
  EVIDENCE_BUNDLE_TYPE,
  EvidenceBundlePayloadSchema,
  canonicalJsonBytes,
  type EvidenceBundlePayload,
} from '@dpp/shared';
import type { DeviceKey } from '../identity/index.js';

export async function signEvidenceBundle(payload: EvidenceBundlePayload, key: DeviceKey): Promise<string> {
  const checked = EvidenceBundlePayloadSchema.parse(payload);
  return new CompactSign(canonicalJsonBytes(checked))
    .setProtectedHeader({ alg: 'EdDSA', typ: EVIDENCE_BUNDLE_TYPE, kid: key.kid })
    .sign(key.privateKey);
}
