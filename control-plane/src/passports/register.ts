/**
 * POST /products/{id}/publish-dpp: registers the Digital Link of a published passport (dpp_identifiers
 * goes from 0 to 1, the item becomes resolvable) and answers a credential signed by the tenant's issuer
 * key that commits to the version's Merkle root, so any one section can later be proven on its own.
 */
import { randomUUID } from 'node:crypto';
import { recordAudit } from '../audit/index.js';
import type { Environment } from '../config/index.js';
import { ApiError } from '../http/index.js';
import { getProductForUpdate } from '../products/index.js';
import type {
  Db,
  DppIdentifierTable,
  PassportVersionTable,
  ProductTable,
  SecretBox,
} from '../store/index.js';
import { digitalLinkOf } from './content.js';
import { tenantIssuerKey, type CredentialSigner, type IssuerKey } from './issuer.js';
import { MERKLE_ALGORITHM } from './merkle.js';
import type { PassportWriteContext } from './publish.js';
import { appendLog, getPassportForUpdate, getVersionById, parseSections } from './queries.js';
import { isBatteryMarked } from './requirements.js';

export const PASSPORT_TYPES = ['generic', 'battery', 'electronics', 'textile', 'furniture'] as const;

export interface RegisterDeps {
  db: Db;
  secrets: SecretBox;
  env: Environment;
  signer: CredentialSigner;
  publicBaseUrl: string;
}

export interface RegisterInput {
  publishToWallet?: boolean | undefined;
  passportType?: string | undefined;
}

function registrationCredential(
  key: IssuerKey,
  product: ProductTable,
  version: PassportVersionTable,
  digitalLink: string,
  passportType: string,
  at: string,
): Record<string, unknown> {
  return {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    id: `urn:uuid:${randomUUID()}`,
    type: ['VerifiableCredential', 'DigitalProductPassportCredential'],
    issuer: key.did,
    validFrom: at.replace(/\.\d{3}Z$/, 'Z'),
    credentialSubject: {
      id: digitalLink,
      type: 'DigitalProductPassport',
      passportUid: product.id,
      passportType,
      gtin: product.gtin,
      serialNumber: product.serial_number,
      version: version.version,
      versionId: version.id,
      versionHash: version.hash,
      contentHash: version.content_hash,
      merkleRoot: version.merkle_root,
      merkleAlgorithm: MERKLE_ALGORITHM,
    },
  };
}

/**
 * The checks, in order: the product exists (404); production cannot bind an eIDAS actor (503
 * EIDAS_ACTOR_BINDING_UNAVAILABLE, no credential issued); a battery-marked product or a battery
 * passportType cannot be judged (503 COMPLIANCE_EVALUATION_UNAVAILABLE); the product is not voided and
 * its passport has a published version (422 INVALID_STATE_TRANSITION). A repeat for the same version
 * answers the registration already made (200); a newer version re-issues the credential (200).
 */
export async function publishDpp(
  deps: RegisterDeps,
  ctx: PassportWriteContext,
  productId: string,
  input: RegisterInput,
) {
  return deps.db.transaction().execute(async (trx) => {
    const product = await getProductForUpdate(trx, ctx.tenantId, productId);
    if (!product) throw ApiError.notFound('Product');
    if (deps.env === 'production') {
      throw new ApiError(
        'EIDAS_ACTOR_BINDING_UNAVAILABLE',
        'No eIDAS actor identity can be bound yet; no credential was issued',
        {
          details: { productId, issued: false },
        },
      );
    }
    const customData =
      product.custom_data === null ? null : (JSON.parse(product.custom_data) as Record<string, unknown>);
    const batteryMarked = isBatteryMarked(product.category, customData);
    const passportType = input.passportType ?? (batteryMarked ? 'battery' : 'generic');
    if (batteryMarked || passportType === 'battery') {
      throw new ApiError(
        'COMPLIANCE_EVALUATION_UNAVAILABLE',
        'Battery compliance evaluation is unavailable; the service refuses to judge and registers nothing',
        { details: { productId, passportType, batteryMarked, issued: false } },
      );
    }
    const passport = await getPassportForUpdate(trx, ctx.tenantId, productId);
    if (product.voided_at || !passport || !passport.current_version_id) {
      throw new ApiError(
        'INVALID_STATE_TRANSITION',
        product.voided_at
          ? 'A voided product cannot be registered'
          : 'Publish a passport version first (POST /api/v2/dpp/{productId}/publish); there is nothing to register',
        {
          details: {
            productId,
            from: product.voided_at ? 'voided' : passport ? 'dpp_issued' : product.stage,
            required: 'a published version',
          },
        },
      );
    }
    const version = (await getVersionById(trx, passport.current_version_id))!;
    const existing = await trx
      .selectFrom('dpp_identifiers')
      .selectAll()
      .where('product_id', '=', productId)
      .executeTakeFirst();
    const digitalLink = digitalLinkOf(deps.publicBaseUrl, product.gtin, product.serial_number);
    if (existing && existing.version_id === version.id && existing.passport_type === passportType) {
      return { created: false, identifier: existing, version };
    }
    const at = new Date(ctx.now()).toISOString();
    const key = await tenantIssuerKey(trx, ctx.tenantId, deps.secrets, ctx.now);
    let credential: Record<string, unknown>;
    try {
      credential = await deps.signer.sign(
        registrationCredential(key, product, version, digitalLink, passportType, at),
        key,
      );
    } catch (err) {
      throw new ApiError('ISSUANCE_FAILED', 'The credential could not be signed; nothing was registered', {
        cause: err,
        details: { productId, issued: false },
      });
    }
    const row: DppIdentifierTable = {
      id: existing?.id ?? randomUUID(),
      tenant_id: ctx.tenantId,
      product_id: productId,
      gtin: product.gtin,
      serial: product.serial_number,
      digital_link: digitalLink,
      passport_type: passportType,
      version_id: version.id,
      version: version.version,
      merkle_root: version.merkle_root,
      credential: JSON.stringify(credential),
      publish_to_wallet: input.publishToWallet ? 1 : 0,
      registered_at: existing?.registered_at ?? at,
      updated_at: at,
    };
    if (existing) {
      await trx.updateTable('dpp_identifiers').set(row).where('id', '=', existing.id).execute();
    } else {
      await trx.insertInto('dpp_identifiers').values(row).execute();
    }
    await appendLog(trx, {
      tenantId: ctx.tenantId,
      productId,
      type: existing ? 'DIGITAL_LINK_REISSUED' : 'DIGITAL_LINK_REGISTERED',
      data: {
        digitalLink,
        passportType,
        version: version.version,
        versionId: version.id,
        merkleRoot: version.merkle_root,
        credentialId: credential.id,
      },
      correlationId: ctx.correlationId,
      at,
    });
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: existing ? 'passport.digital_link_reissued' : 'passport.digital_link_registered',
      resource: { type: 'passport', id: productId },
      correlationId: ctx.correlationId,
      details: { digitalLink, passportType, version: version.version },
      at,
    });
    return { created: !existing, identifier: row, version };
  });
}

/** The publish-dpp answer. */
export function registrationView(identifier: DppIdentifierTable, version: PassportVersionTable) {
  const sections = Object.keys(parseSections(version.content)).sort();
  const digitalPath = new URL(identifier.digital_link).pathname;
  return {
    passportUid: identifier.product_id,
    passportType: identifier.passport_type,
    digitalLink: identifier.digital_link,
    registeredAt: identifier.registered_at,
    version: identifier.version,
    versionId: identifier.version_id,
    credential: JSON.parse(identifier.credential) as Record<string, unknown>,
    merkleRoot: identifier.merkle_root,
    merkleAlgorithm: MERKLE_ALGORITHM,
    sections,
    publishToWallet: {
      requested: identifier.publish_to_wallet === 1,
      delivered: false,
      reason: identifier.publish_to_wallet === 1 ? 'no wallet connector is configured' : null,
    },
    links: {
      resolver: digitalPath,
      page: `/p/${identifier.product_id}`,
      public: `/api/v2/public/passport/${identifier.product_id}`,
      proof: `/api/v2/passports/${identifier.product_id}/proofs/{section}`,
    },
  };
}
