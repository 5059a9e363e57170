/** Request and response schemas of the passport operations (the OpenAPI document is built from them). */
import { z } from 'zod';
import { REGISTRY_NAMES } from '../config/index.js';
import { SECTION_NAME } from './content.js';
import { GENERATION_STAGES } from './generation-store.js';
import { DISCLOSURE_TIERS, PASSPORT_STATES } from './model.js';
import { STRICTNESS } from './pipeline.js';
import { PASSPORT_TYPES } from './register.js';

const Timestamp = z.iso.datetime();
const Hex = z.string().regex(/^[0-9a-f]{64}$/);
const DID = /^did:[a-z0-9]+:(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})+(?::(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})+)*$/;

export const IdParam = z.object({ id: z.uuid() });
export const ProductIdParam = z.object({ productId: z.uuid() });
export const RequestIdParam = z.object({ requestId: z.uuid() });
export const SectionParam = z.object({
  id: z.uuid(),
  section: z.string().regex(SECTION_NAME, 'is not a section name'),
});

const Sections = z.record(
  z.string().regex(SECTION_NAME, 'is not a section name'),
  z.record(z.string(), z.unknown()),
);

export const GenerateBody = z
  .strictObject({
    productId: z.uuid().meta({ description: 'The product; it must be ready_for_dpp' }),
    strictness: z.enum(STRICTNESS).optional().meta({
      description:
        'standard (default): required schema fields and bounds must hold, missing optional fields are warnings; strict: every schema field must be present; advisory: schema problems are only warnings. Required credentials are always enforced.',
    }),
    region: z.string().min(2).max(10).optional().meta({
      description: "Jurisdiction of the schema to check against (the product's by default), e.g. EU",
    }),
    lifecycleStage: z
      .string()
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'Recorded in the product section, e.g. production' }),
    dppOptions: z
      .strictObject({
        requestId: z
          .string()
          .min(1)
          .max(100)
          .optional()
          .meta({ description: 'Your own reference, echoed as options.clientRequestId' }),
        manufacturerDid: z
          .string()
          .regex(DID, 'must be a DID')
          .optional()
          .meta({ description: 'Shown in the manufacturer section' }),
        anchorToBlockchain: z.boolean().optional().meta({
          description:
            'Ignored in the sandbox (it never anchors); elsewhere no chain is configured, so true is 503 ANCHORING_UNAVAILABLE',
        }),
      })
      .optional(),
  })
  .meta({ id: 'PassportGenerateRequest' });

const StageSchema = z.object({
  name: z.enum(GENERATION_STAGES.map((s) => s.name) as [string, ...string[]]),
  title: z.string(),
  status: z.enum(['pending', 'running', 'succeeded', 'failed', 'skipped']),
  startedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

export const GenerationStatusSchema = z
  .object({
    requestId: z.uuid(),
    productId: z.uuid(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed']),
    stage: z.string().nullable().meta({ description: 'The stage running, or the last one run' }),
    stages: z.array(StageSchema),
    createdAt: Timestamp,
    startedAt: Timestamp.nullable(),
    finishedAt: Timestamp.nullable(),
    attempts: z.number().int(),
    options: z.record(z.string(), z.unknown()),
    anchoring: z.object({ requested: z.boolean(), performed: z.boolean(), reason: z.string().nullable() }),
    warnings: z.array(z.unknown()),
    error: z
      .object({
        code: z.string(),
        message: z.string(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .nullable(),
    result: z.record(z.string(), z.unknown()).nullable(),
    links: z.object({ self: z.string(), passport: z.string() }),
  })
  .meta({ id: 'PassportGenerationStatus' });

export const PublishBody = z
  .strictObject({
    amendmentReason: z.string().min(10, 'must be at least 10 characters').max(2000).meta({
      description: 'Why this version is published; at least 10 characters',
    }),
    updates: Sections.optional().meta({
      description:
        'Sections to change, keyed by section name, each an object of fields (null removes a field); identifiers and credentials are derived and cannot be updated',
    }),
    disclosure: z
      .record(z.string().regex(SECTION_NAME, 'is not a section name'), z.enum(DISCLOSURE_TIERS))
      .optional()
      .meta({
        description:
          'Disclosure tier per section (public by default; customData is internal). Only public sections reach the public route.',
      }),
  })
  .meta({ id: 'PassportPublishRequest' });

export const VersionSchema = z
  .object({
    versionId: z.uuid(),
    version: z.number().int(),
    previous_version_id: z
      .uuid()
      .nullable()
      .meta({ description: 'The version this one supersedes (hash-chain link)' }),
    previousHash: Hex.nullable(),
    current: z.boolean(),
    hash: Hex,
    contentHash: Hex,
    merkleRoot: Hex,
    amendmentReason: z.string(),
    publishedAt: Timestamp,
    content: z.record(z.string(), z.unknown()),
    disclosure: z.record(z.string(), z.string()),
  })
  .meta({ id: 'PassportVersion' });

export const PublishResultSchema = z
  .object({
    passportUid: z
      .uuid()
      .meta({ description: 'The public uid: the product id (the resolver redirects to /p/{uid})' }),
    state: z.enum(PASSPORT_STATES).meta({ description: 'The command lifecycle state, unchanged by publish' }),
    version: VersionSchema,
    links: z.record(z.string(), z.string()),
  })
  .meta({ id: 'PassportPublishResult' });

export const PublishDppBody = z
  .strictObject({
    publishToWallet: z
      .boolean()
      .optional()
      .meta({ description: 'Recorded; no wallet connector is configured, so nothing is delivered' }),
    passportType: z.enum(PASSPORT_TYPES).optional().meta({
      description:
        'Not defaulted: when omitted it is derived from the product, battery for a battery-marked product, otherwise generic',
    }),
  })
  .meta({ id: 'PublishDppRequest' });

export const RegistrationSchema = z
  .object({
    passportUid: z.uuid(),
    passportType: z.string(),
    digitalLink: z.string(),
    registeredAt: Timestamp,
    version: z.number().int(),
    versionId: z.uuid(),
    credential: z
      .record(z.string(), z.unknown())
      .meta({ description: "A W3C VC signed by the tenant's did:key (eddsa-jcs-2022)" }),
    merkleRoot: Hex,
    merkleAlgorithm: z.string(),
    sections: z.array(z.string()),
    publishToWallet: z.object({
      requested: z.boolean(),
      delivered: z.boolean(),
      reason: z.string().nullable(),
    }),
    links: z.record(z.string(), z.string()),
  })
  .meta({ id: 'PassportRegistration' });

export const BroadcastBody = z
  .strictObject({
    registries: z
      .array(z.enum(REGISTRY_NAMES, { error: `must be one of ${REGISTRY_NAMES.join(', ')} (upper case)` }))
      .min(1)
      .optional()
      .meta({ description: 'The registries to send to (all configured ones when omitted); honoured' }),
    passportData: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: 'Payload override; the current version otherwise' }),
  })
  .meta({ id: 'PassportBroadcastRequest' });

export const BroadcastResultSchema = z
  .object({
    passportUid: z.uuid(),
    broadcastId: z.uuid(),
    broadcastAt: Timestamp,
    registries: z.array(z.enum(REGISTRY_NAMES)),
    accepted: z.number().int(),
    failed: z.number().int(),
    results: z.array(
      z.object({
        registry: z.enum(REGISTRY_NAMES),
        status: z.enum(['accepted', 'failed']),
        httpStatus: z.number().int().nullable(),
        error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'PassportBroadcastResult' });

export const ValidationBody = z
  .strictObject({
    vc: z.record(z.string(), z.unknown()).meta({
      description:
        'A W3C Verifiable Credential with @context, type, issuer, issuanceDate (or validFrom), credentialSubject and one eddsa-jcs-2022 DataIntegrityProof',
    }),
    signatureAlgorithm: z
      .string()
      .min(1)
      .max(50)
      .optional()
      .meta({ description: 'Recorded on the entry; default ECDSA-P-256' }),
  })
  .meta({ id: 'PassportValidationRequest' });

const ValidationEntry = z.object({
  eventId: z.uuid(),
  occurredAt: Timestamp,
  digest: Hex,
  signatureAlgorithm: z.string(),
  jrcAnchor: z
    .unknown()
    .nullable()
    .meta({ description: 'null: nothing is anchored with the EU registry (no connector)' }),
  issuer: z.string(),
  types: z.array(z.string()),
});

export const ValidationAnchoredSchema = z
  .object({
    upi: z.string(),
    digest: Hex,
    anchoredAt: Timestamp,
    eventId: z.uuid(),
    signatureAlgorithm: z.string(),
    jrcAnchor: z.unknown().nullable(),
  })
  .meta({ id: 'PassportValidationAnchored' });

export const ValidationListSchema = z
  .object({ upi: z.string(), validations: z.array(ValidationEntry), readyToPrint: z.boolean() })
  .meta({ id: 'PassportValidations' });

export const CommandResultSchema = z
  .object({
    commandId: z.uuid(),
    type: z.string(),
    passportId: z.uuid(),
    idempotencyKey: z.uuid(),
    fromState: z.enum(PASSPORT_STATES),
    state: z.enum(PASSPORT_STATES),
    changed: z.boolean(),
    disclosureTier: z.enum(DISCLOSURE_TIERS),
    appliedAt: Timestamp,
    warnings: z.array(z.string()),
  })
  .meta({ id: 'PassportCommandResult' });

export const AsOfQuery = z.object({
  date: z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], {
      error: 'must be an ISO 8601 date or date-time',
    })
    .meta({ description: 'The instant to project at (ISO 8601); a date alone means its start, UTC' }),
});

export const ProofQuery = z.object({
  version: z
    .string()
    .regex(/^[1-9]\d{0,8}$/, 'must be a version number')
    .transform(Number)
    .optional(),
});

export const LooseObject = z.record(z.string(), z.unknown());
