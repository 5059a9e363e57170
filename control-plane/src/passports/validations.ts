/**
 * POST/GET /passports/{id}/validations: validation-result credentials anchored into the passport's
 * lifecycle log (VALIDATION_RESULT_ANCHORED). Every check runs before any write.
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson, issuerDid, verificationMethodDid, verifyProof } from '@dpp/shared';
import { recordAudit } from '../audit/index.js';
import { ApiError } from '../http/index.js';
import type { Db, PassportValidationTable } from '../store/index.js';
import { sha256Hex } from './chain.js';
import { digitalLinkOf } from './content.js';
import type { PassportWriteContext } from './publish.js';
import { anchoredCredentials, appendLog, getPassportForUpdate, parseSections } from './queries.js';
import { isReadyToPrint } from './readiness.js';

/** The DID methods the EUDI wallet ecosystem accepts; of these only did:key resolves offline here. */
export const ACCEPTED_DID_METHODS = ['did:web', 'did:ebsi', 'did:key'] as const;
export const RESOLVABLE_DID_METHODS = ['did:key'] as const;
export const DEFAULT_SIGNATURE_ALGORITHM = 'ECDSA-P-256';

const REQUIRED_MEMBERS = ['@context', 'type', 'issuer', 'credentialSubject'] as const;

function notVerified(reason: string, extra: Record<string, unknown> = {}): ApiError {
  return new ApiError(
    'VALIDATION_CREDENTIAL_NOT_VERIFIED',
    `The credential was not verified: ${reason}; nothing was written`,
    {
      details: { reason, ...extra },
    },
  );
}

/**
 * The checks, in order:
 * 1. shape: a W3C VC with @context, type, issuer, credentialSubject and issuanceDate (VC 1.1) or
 *    validFrom (VC 2.0): else 400 VALIDATION_ERROR naming `vc.<member>`;
 * 2. issuer: a DID of an accepted method that resolves offline (did:key): else 422
 *    EUDIW_INCOMPATIBLE_DID_METHOD (an https issuer, did:web and did:ebsi included);
 * 3. proof: exactly one DataIntegrityProof, cryptosuite eddsa-jcs-2022, proofPurpose assertionMethod,
 *    verificationMethod DID equal to the issuer DID, and the Ed25519 signature verifies: else 422
 *    VALIDATION_CREDENTIAL_NOT_VERIFIED.
 */
export function verifyValidationCredential(vc: Record<string, unknown>): { issuer: string; types: string[] } {
  for (const m of REQUIRED_MEMBERS) {
    if (vc[m] === undefined || vc[m] === null)
      throw ApiError.validation(`vc.${m}`, `vc.${m}: a verifiable credential has ${m}`);
  }
  if (vc.issuanceDate === undefined && vc.validFrom === undefined) {
    throw ApiError.validation(
      'vc.issuanceDate',
      'vc.issuanceDate: a verifiable credential has issuanceDate (or validFrom)',
    );
  }
  const types = (Array.isArray(vc.type) ? vc.type : [vc.type]).filter(
    (t): t is string => typeof t === 'string',
  );
  const issuer = issuerDid(vc);
  const rawIssuer =
    typeof vc.issuer === 'object' && vc.issuer !== null
      ? (vc.issuer as Record<string, unknown>).id
      : vc.issuer;
  const method = issuer?.split(':', 2).join(':');
  if (!issuer || !(RESOLVABLE_DID_METHODS as readonly string[]).includes(method!)) {
    const accepted = method !== undefined && (ACCEPTED_DID_METHODS as readonly string[]).includes(method);
    throw new ApiError(
      'EUDIW_INCOMPATIBLE_DID_METHOD',
      !issuer
        ? `The issuer ${JSON.stringify(rawIssuer)} is not a DID; the issuer must be a did:key`
        : accepted
          ? `${method} issuers are accepted but cannot be resolved offline yet; use did:key`
          : `${method} is not an accepted DID method (${ACCEPTED_DID_METHODS.join(', ')})`,
      {
        details: {
          issuer: rawIssuer ?? null,
          method: method ?? null,
          acceptedMethods: ACCEPTED_DID_METHODS,
          resolvableMethods: RESOLVABLE_DID_METHODS,
        },
      },
    );
  }
  const proof = vc.proof;
  if (Array.isArray(proof)) throw notVerified('the credential must carry a single proof, not a proof set');
  if (typeof proof !== 'object' || proof === null) throw notVerified('the credential has no proof');
  const p = proof as Record<string, unknown>;
  if (p.type !== 'DataIntegrityProof')
    throw notVerified(`proof type is ${JSON.stringify(p.type)}, not DataIntegrityProof`);
  if (p.cryptosuite !== 'eddsa-jcs-2022')
    throw notVerified(`cryptosuite is ${JSON.stringify(p.cryptosuite)}, not eddsa-jcs-2022`);
  if (p.proofPurpose !== 'assertionMethod')
    throw notVerified(`proofPurpose is ${JSON.stringify(p.proofPurpose)}, not assertionMethod`);
  const vmDid = verificationMethodDid(p);
  if (vmDid !== issuer) {
    throw notVerified('the verificationMethod DID is not the issuer DID', {
      issuer,
      verificationMethod: p.verificationMethod ?? null,
    });
  }
  const result = verifyProof(vc, { expectedProofPurpose: 'assertionMethod' });
  if (!result.verified) throw notVerified(result.reason ?? 'the signature does not verify');
  return { issuer, types };
}

/** SHA-256 hex of the credential's RFC 8785 form: the same VC always gives the same digest. */
export function credentialDigest(vc: unknown): string {
  return sha256Hex(canonicalJson(vc));
}

function entryView(r: PassportValidationTable) {
  return {
    eventId: r.event_id,
    occurredAt: r.occurred_at,
    digest: r.digest,
    signatureAlgorithm: r.signature_algorithm,
    jrcAnchor: r.jrc_anchor === null ? null : (JSON.parse(r.jrc_anchor) as unknown),
    issuer: r.issuer,
    types: JSON.parse(r.credential_types) as string[],
  };
}

async function productOf(db: Db, tenantId: string, productId: string) {
  const product = await db
    .selectFrom('products')
    .select(['id', 'gtin', 'serial_number'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', productId)
    .executeTakeFirst();
  if (!product) throw ApiError.notFound('Passport');
  return product;
}

/**
 * Anchors a verified credential. Re-anchoring the same credential (same digest) records nothing new and
 * answers the first entry (`created: false`; the route answers 201 either way, the spec's one status). When the passport exists, its working `credentials`
 * section is refreshed so the next version lists the credential.
 */
export async function anchorValidation(
  db: Db,
  ctx: PassportWriteContext & { publicBaseUrl: string },
  productId: string,
  input: { vc: Record<string, unknown>; signatureAlgorithm?: string | undefined },
) {
  const product = await productOf(db, ctx.tenantId, productId);
  const { issuer, types } = verifyValidationCredential(input.vc);
  const digest = credentialDigest(input.vc);
  const upi = digitalLinkOf(ctx.publicBaseUrl, product.gtin, product.serial_number);
  return db.transaction().execute(async (trx) => {
    const passport = await getPassportForUpdate(trx, ctx.tenantId, productId);
    const existing = await trx
      .selectFrom('passport_validations')
      .selectAll()
      .where('product_id', '=', productId)
      .where('digest', '=', digest)
      .executeTakeFirst();
    if (existing) return { created: false, upi, entry: entryView(existing) };
    const at = new Date(ctx.now()).toISOString();
    const row: PassportValidationTable = {
      event_id: randomUUID(),
      tenant_id: ctx.tenantId,
      product_id: productId,
      digest,
      signature_algorithm: input.signatureAlgorithm ?? DEFAULT_SIGNATURE_ALGORITHM,
      issuer,
      credential_types: JSON.stringify(types),
      credential: JSON.stringify(input.vc),
      jrc_anchor: null,
      occurred_at: at,
    };
    await trx.insertInto('passport_validations').values(row).execute();
    await appendLog(trx, {
      tenantId: ctx.tenantId,
      productId,
      type: 'VALIDATION_RESULT_ANCHORED',
      data: { eventId: row.event_id, digest, issuer, types, signatureAlgorithm: row.signature_algorithm },
      correlationId: ctx.correlationId,
      at,
    });
    if (passport) {
      const content = {
        ...parseSections(passport.content),
        credentials: await anchoredCredentials(trx, ctx.tenantId, productId),
      };
      await trx
        .updateTable('passports')
        .set({ content: JSON.stringify(content), updated_at: at })
        .where('product_id', '=', productId)
        .execute();
    }
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: 'passport.validation_anchored',
      resource: { type: 'passport', id: productId },
      correlationId: ctx.correlationId,
      details: { eventId: row.event_id, digest, issuer },
      at,
    });
    return { created: true, upi, entry: entryView(row) };
  });
}

/** GET /passports/{id}/validations. */
export async function listValidations(db: Db, tenantId: string, productId: string, publicBaseUrl: string) {
  const product = await productOf(db, tenantId, productId);
  const rows = await db
    .selectFrom('passport_validations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .orderBy('occurred_at')
    .orderBy('event_id')
    .execute();
  return {
    upi: digitalLinkOf(publicBaseUrl, product.gtin, product.serial_number),
    validations: rows.map(entryView),
    readyToPrint: await isReadyToPrint(db, tenantId, productId),
  };
}
