/**
 * The six stages of passport generation, each a function of what the previous ones produced. A stage
 * fails by throwing the typed error the status shows; the worker (generation-worker.ts) records progress.
 */
import { issuerDid, verificationMethodDid, verifyProof } from '@dpp/shared';
import { ApiError } from '../http/index.js';
import type { SchemaRegistry } from '../schemas/index.js';
import { validateFields } from '../schemas/index.js';
import type { Db, PassportGenerationTable, ProductTable, SecretBox } from '../store/index.js';
import { contentHash } from './chain.js';
import { assembleSections, type Sections } from './content.js';
import type { CredentialSigner, IssuerKey } from './issuer.js';
import { tenantIssuerKey } from './issuer.js';
import { merkleRoot } from './merkle.js';
import { anchoredCredentials } from './queries.js';
import { missingCredentials, requiredCredentials } from './requirements.js';

export const STRICTNESS = ['advisory', 'standard', 'strict'] as const;
export type Strictness = (typeof STRICTNESS)[number];

export interface GenerationOptions {
  strictness?: Strictness | undefined;
  region?: string | undefined;
  lifecycleStage?: string | undefined;
  dppOptions?:
    | {
        requestId?: string | undefined;
        manufacturerDid?: string | undefined;
        anchorToBlockchain?: boolean | undefined;
      }
    | undefined;
}

export interface PipelineDeps {
  db: Db;
  /** Opens the tenant's issuer key (sealed at rest with SECRETS_KEY). */
  secrets: SecretBox;
  registry: SchemaRegistry;
  signer: CredentialSigner;
  publicBaseUrl: string;
  now: () => number;
}

export interface Warning {
  stage: string;
  code: string;
  message: string;
  field?: string;
}

export const statusPath = (requestId: string): string => `/api/v2/dpp/status/${requestId}`;

/** Stage 1: the product exists in the tenant, is not voided and is ready_for_dpp. */
export async function loadProduct(deps: PipelineDeps, job: PassportGenerationTable): Promise<ProductTable> {
  const product = await deps.db
    .selectFrom('products')
    .selectAll()
    .where('tenant_id', '=', job.tenant_id)
    .where('id', '=', job.product_id)
    .executeTakeFirst();
  if (!product)
    throw new ApiError('PRODUCT_NOT_FOUND', 'The product no longer exists', {
      details: { productId: job.product_id },
    });
  assertReadyForDpp(product);
  return product;
}

/** The generation precondition (api-v2.md: both transitions are required before passport generation). */
export function assertReadyForDpp(product: ProductTable): void {
  const from = product.voided_at ? 'voided' : product.stage;
  if (from !== 'ready_for_dpp') {
    throw new ApiError(
      'INVALID_STATE_TRANSITION',
      `A passport is generated from a product in ready_for_dpp, not ${from}`,
      {
        details: { productId: product.id, from, required: 'ready_for_dpp', issued: false },
      },
    );
  }
}

/**
 * Stage 2: the schema effective now for the category in the region (the product's jurisdiction by
 * default), and the extensions checked against it. `standard` fails on a required field missing or a
 * bound broken and warns on missing optional fields; `strict` also fails on those; `advisory` only warns.
 */
export function checkSchema(
  deps: PipelineDeps,
  product: ProductTable,
  options: GenerationOptions,
): { schemaId: string; schemaVersion: string; warnings: Warning[] } {
  const selector = { jurisdiction: options.region ?? product.jurisdiction, at: deps.now() };
  const schema = deps.registry.resolve(product.category, selector);
  if (!schema) throw deps.registry.notFound(product.category, selector, 422);
  const extensions = JSON.parse(product.extensions) as Record<string, unknown>;
  const problems = validateFields(schema.fieldSchema, extensions);
  const optionalMissing = Object.keys(schema.fieldSchema.properties).filter(
    (f) =>
      !schema.fieldSchema.required.includes(f) && (extensions[f] === undefined || extensions[f] === null),
  );
  const strictness = options.strictness ?? 'standard';
  const failing = strictness === 'advisory' ? [] : problems;
  const incomplete = strictness === 'strict' ? optionalMissing : [];
  if (failing.length > 0 || incomplete.length > 0) {
    const issues = [
      ...failing.map((p) => ({ field: `extensions.${p.field}`, keyword: p.keyword, message: p.message })),
      ...incomplete.map((f) => ({
        field: `extensions.${f}`,
        keyword: 'strict',
        message: 'is required by strictness strict',
      })),
    ];
    throw new ApiError(
      'EXTENSIONS_REQUIRED',
      `The extensions do not meet ${schema.schemaId} (${issues[0]!.field}: ${issues[0]!.message})`,
      {
        details: {
          schemaId: schema.schemaId,
          schemaVersion: schema.version,
          strictness,
          issues,
          issued: false,
        },
      },
    );
  }
  const warnings: Warning[] = [
    ...(strictness === 'advisory' ? problems : []).map((p) => ({
      stage: 'check_schema',
      code: 'SCHEMA_PROBLEM',
      field: `extensions.${p.field}`,
      message: p.message,
    })),
    ...(strictness === 'standard' || strictness === 'advisory' ? optionalMissing : []).map((f) => ({
      stage: 'check_schema',
      code: 'OPTIONAL_FIELD_MISSING',
      field: `extensions.${f}`,
      message: 'is not given; the passport shows it as unknown',
    })),
  ];
  return { schemaId: schema.schemaId, schemaVersion: schema.version, warnings };
}

/** Stage 3: every credential the category requires is anchored, else MISSING_REQUIRED_CREDENTIALS. */
export async function resolveCredentials(deps: PipelineDeps, product: ProductTable) {
  const anchored = await anchoredCredentials(deps.db, product.tenant_id, product.id);
  assertCredentials(
    product.category,
    anchored.flatMap((a) => a.types),
  );
  return anchored;
}

export function assertCredentials(category: string, anchoredTypes: readonly string[]): void {
  const missing = missingCredentials(category, new Set(anchoredTypes));
  if (missing.length > 0) {
    throw new ApiError(
      'MISSING_REQUIRED_CREDENTIALS',
      `A ${category} passport needs ${missing.join(', ')}; nothing was issued`,
      {
        details: {
          missingCredentials: missing,
          requiredCredentials: requiredCredentials(category),
          issued: false,
          hint: 'Anchor the credential with POST /api/v2/passports/{id}/validations, then generate again',
        },
      },
    );
  }
}

/** Stage 4: the content sections, their hash and Merkle root. */
export function assembleContent(
  deps: PipelineDeps,
  product: ProductTable,
  anchored: Awaited<ReturnType<typeof anchoredCredentials>>,
  options: GenerationOptions,
): { sections: Sections; contentHash: string; merkleRoot: string } {
  const sections = assembleSections({
    product,
    publicBaseUrl: deps.publicBaseUrl,
    credentials: anchored,
    manufacturerDid: options.dppOptions?.manufacturerDid,
    lifecycleStage: options.lifecycleStage,
  });
  return { sections, contentHash: contentHash(sections), merkleRoot: merkleRoot(sections) };
}

/** The unsigned passport credential of a generation. */
export function passportCredential(
  key: IssuerKey,
  job: PassportGenerationTable,
  product: ProductTable,
  assembled: { sections: Sections; contentHash: string; merkleRoot: string },
  at: string,
): Record<string, unknown> {
  const identifiers = assembled.sections.identifiers as { digitalLink: string };
  return {
    '@context': ['https://www.w3.org/ns/credentials/v2'],
    id: `urn:uuid:${job.id}`,
    type: ['VerifiableCredential', 'DigitalProductPassportCredential'],
    issuer: key.did,
    validFrom: at.replace(/\.\d{3}Z$/, 'Z'),
    credentialSubject: {
      id: identifiers.digitalLink,
      type: 'DigitalProductPassport',
      passportUid: product.id,
      gtin: product.gtin,
      serialNumber: product.serial_number,
      category: product.category,
      contentHash: assembled.contentHash,
      merkleRoot: assembled.merkleRoot,
      generationRequestId: job.id,
    },
  };
}

/** Stage 5: the tenant's issuer key signs the credential; any failure is ISSUANCE_FAILED. */
export async function signCredential(
  deps: PipelineDeps,
  job: PassportGenerationTable,
  product: ProductTable,
  assembled: { sections: Sections; contentHash: string; merkleRoot: string },
): Promise<{ key: IssuerKey; credential: Record<string, unknown> }> {
  const key = await tenantIssuerKey(deps.db, job.tenant_id, deps.secrets, deps.now);
  const unsigned = passportCredential(key, job, product, assembled, new Date(deps.now()).toISOString());
  try {
    return { key, credential: await deps.signer.sign(unsigned, key) };
  } catch (err) {
    throw new ApiError(
      'ISSUANCE_FAILED',
      'The passport credential could not be signed; no passport was issued',
      {
        cause: err,
        details: {
          status: statusPath(job.id),
          requestId: job.id,
          issued: false,
          reason: err instanceof Error ? err.message : String(err),
        },
      },
    );
  }
}

/**
 * Stage 6 (first half): the issuance is confirmed only when the credential verifies, is issued by the
 * tenant's DID and commits to the assembled content. Otherwise ISSUANCE_NOT_CONFIRMED.
 */
export function confirmCredential(
  job: PassportGenerationTable,
  key: IssuerKey,
  credential: Record<string, unknown>,
  assembled: { contentHash: string; merkleRoot: string },
): void {
  const proof = verifyProof(credential);
  const subject = credential.credentialSubject as Record<string, unknown> | undefined;
  const problems = [
    ...(proof.verified ? [] : [`the proof does not verify (${proof.reason ?? 'unknown'})`]),
    ...(issuerDid(credential) === key.did ? [] : ['the issuer is not the tenant issuer DID']),
    ...(verificationMethodDid(credential.proof) === key.did
      ? []
      : ['the verification method is not the issuer DID']),
    ...(subject?.contentHash === assembled.contentHash && subject.merkleRoot === assembled.merkleRoot
      ? []
      : ['the credential does not commit to the assembled content']),
  ];
  if (problems.length > 0) {
    throw new ApiError(
      'ISSUANCE_NOT_CONFIRMED',
      `The issued credential could not be confirmed: ${problems.join('; ')}`,
      {
        details: { status: statusPath(job.id), requestId: job.id, issued: false, problems },
      },
    );
  }
}
