/**
 * Verifies a signed AIDC envelope before anything is printed (DESIGN.md, Identity): a compact JWS with
 * EdDSA and `typ: dpp-aidc-envelope+jws`, signed by a key of the control plane's JWKS, issued by the
 * control plane the device enrolled with, for this device (`aud`), not expired, with the claims of
 * `AidcEnvelopeClaimsSchema`. The claims must also agree with themselves: the EPC decodes to the GTIN and
 * serial, and the Digital Link carries them.
 */
import { errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import {
  AIDC_ENVELOPE_TYPE,
  AidcEnvelopeClaimsSchema,
  decodeLabelEpc,
  envelopeEpc,
  parseDigitalLink,
  type AidcEnvelopeClaims,
} from '@dpp/shared';
import { AgentError } from '../errors.js';

export interface VerifyEnvelopeOptions {
  keys: JWTVerifyGetKey;
  deviceId: string;
  issuer: string;
  now?: () => number;
  /** Clock skew tolerated on `exp`/`iat`, in seconds (default 5). */
  clockToleranceSec?: number;
}

export interface VerifiedEnvelope {
  claims: AidcEnvelopeClaims;
  /** `kid` of the control-plane key that signed it. */
  kid: string | undefined;
}

function invalid(reason: string, message: string, cause?: unknown): AgentError {
  return new AgentError('ENVELOPE_INVALID', `envelope: ${message}`, { details: { reason }, cause });
}

export async function verifyEnvelope(jws: string, options: VerifyEnvelopeOptions): Promise<VerifiedEnvelope> {
  let payload: unknown;
  let kid: string | undefined;
  try {
    const verified = await jwtVerify(jws, options.keys, {
      algorithms: ['EdDSA'],
      typ: AIDC_ENVELOPE_TYPE,
      audience: options.deviceId,
      issuer: options.issuer,
      requiredClaims: ['exp', 'jti', 'aud', 'iss'],
      clockTolerance: options.clockToleranceSec ?? 5,
      currentDate: new Date((options.now ?? Date.now)()),
    });
    payload = verified.payload;
    kid = verified.protectedHeader.kid;
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw invalid('expired', 'expired', err);
    if (err instanceof joseErrors.JWTClaimValidationFailed) {
      const reason = err.claim === 'aud' ? 'audience' : err.claim === 'iss' ? 'issuer' : `claim_${err.claim}`;
      throw invalid(reason, `${err.claim} check failed (${err.reason})`, err);
    }
    if (err instanceof joseErrors.JWSSignatureVerificationFailed)
      throw invalid('signature', 'the signature does not verify', err);
    if (err instanceof joseErrors.JWKSNoMatchingKey)
      throw invalid('unknown_key', 'no key of the control plane matches its kid', err);
    if (jwksUnavailable(err))
      throw new AgentError('NETWORK', `envelope: the JWKS could not be fetched (${(err as Error).message})`, {
        cause: err,
      });
    throw invalid('malformed', (err as Error).message, err);
  }
  const parsed = AidcEnvelopeClaimsSchema.safeParse(payload);
  if (!parsed.success)
    throw invalid('claims', `claims do not match the contract (${parsed.error.issues[0]?.message})`);
  const claims = parsed.data;
  checkConsistency(claims);
  return { claims, kid };
}

/** The key set could not be had (timeout, no answer, not a 200): nothing is known about the envelope yet. */
function jwksUnavailable(err: unknown): boolean {
  if (err instanceof joseErrors.JWKSTimeout) return true;
  if (!(err instanceof joseErrors.JOSEError)) return true; // fetch itself failed
  return err.code === 'ERR_JOSE_GENERIC' && /JSON Web Key Set/i.test(err.message);
}

/** The EPC and the Digital Link must both name the envelope's GTIN and serial. */
function checkConsistency(c: AidcEnvelopeClaims): void {
  let epc;
  try {
    const named = envelopeEpc(c);
    epc = decodeLabelEpc(named.hex);
    if (epc.scheme !== named.scheme) throw new Error(`its header is ${epc.scheme}, not ${named.scheme}`);
    // An envelope naming both: its sgtin96_epc is the same EPC.
    if (c.epc && c.sgtin96_epc !== null && c.sgtin96_epc !== c.epc.hex)
      throw new Error('sgtin96_epc and epc name different EPCs');
  } catch (err) {
    throw invalid('epc', `the envelope's EPC is not a valid SGTIN (${(err as Error).message})`, err);
  }
  if (epc.gtin !== c.gtin || epc.serial !== c.serial)
    throw invalid('epc', `the EPC names ${epc.gtin}/${epc.serial}, not ${c.gtin}/${c.serial}`);
  let link;
  try {
    link = parseDigitalLink(c.digital_link);
  } catch (err) {
    throw invalid('digital_link', `digital_link is not a GS1 Digital Link (${(err as Error).message})`, err);
  }
  if (link.gtin !== c.gtin || link.serial !== c.serial)
    throw invalid(
      'digital_link',
      `digital_link names ${link.gtin}/${link.serial}, not ${c.gtin}/${c.serial}`,
    );
}
