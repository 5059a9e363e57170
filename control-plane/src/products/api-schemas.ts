import { EPC_SCHEME_PREFERENCES } from '@dpp/shared';
import { z } from 'zod';
import { GRANULARITIES } from './model.js';

const Timestamp = z.iso.datetime();

export const ProductSchema = z
  .object({
    id: z.uuid().meta({ description: 'The product id (also the public passport uid later)' }),
    productName: z.string().meta({ description: 'The request field name, renamed' }),
    productDescription: z.string().meta({ description: 'The request field description, renamed' }),
    category: z.string(),
    jurisdiction: z.string(),
    schemaId: z
      .string()
      .meta({ description: 'The category schema version the extensions were validated against' }),
    schemaVersion: z.string(),
    gtin: z
      .string()
      .regex(/^\d{14}$/)
      .meta({ description: '14 digits' }),
    serialNumber: z.string(),
    granularity: z.enum(GRANULARITIES),
    companyPrefixLength: z.number().int().min(6).max(12),
    epcScheme: z.enum(EPC_SCHEME_PREFERENCES).meta({
      description:
        'EPC scheme of its RFID tags: auto (SGTIN-96 when the serial fits, else SGTIN-198), sgtin-96 or sgtin-198',
    }),
    status: z.string().meta({
      description:
        'Draft, Validated, ReadyForDpp (the lifecycle stage capitalised) or Voided. Later stages show the same way (dpp_issued as DppIssued).',
    }),
    lifecycleStage: z
      .string()
      .meta({ description: 'draft, validated or ready_for_dpp (the stage names of transition)' }),
    extensions: z.record(z.string(), z.unknown()),
    customData: z.record(z.string(), z.unknown()).nullable(),
    version: z.number().int().meta({ description: 'Incremented by every write; see /versions' }),
    everPublished: z
      .boolean()
      .meta({ description: 'A passport of this product was published at least once' }),
    firstPublishedAt: Timestamp.nullable(),
    inPrintLoop: z.boolean().meta({ description: 'Serials of this product entered the print loop' }),
    printLoopEnteredAt: Timestamp.nullable(),
    voidedAt: Timestamp.nullable(),
    voidReason: z.string().nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Product' });

export const ProductVersionSchema = z
  .object({
    version: z.number().int(),
    change: z.enum(['created', 'updated', 'transitioned', 'voided']),
    changedFields: z.array(z.string()),
    reason: z.string().nullable(),
    actor: z.object({ type: z.string(), id: z.string().nullable() }),
    correlationId: z.string().nullable(),
    createdAt: Timestamp,
    snapshot: ProductSchema,
  })
  .meta({ id: 'ProductVersion' });

export const ProductEventSchema = z
  .object({
    id: z.uuid().meta({ description: 'The event id; webhook deliveries of this event carry it as id' }),
    type: z.string(),
    occurredAt: Timestamp,
    correlationId: z.string().nullable(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'ProductEvent' });

export const BatchResultSchema = z
  .object({
    created: z.number().int(),
    failed: z.number().int(),
    errors: z.array(
      z.object({
        index: z.number().int().meta({ description: 'Position of the item in items (0-based)' }),
        error: z
          .string()
          .meta({ description: '"CODE: message", e.g. "DUPLICATE_GTIN: GTIN ... is already used"' }),
        code: z.string(),
        field: z.string().optional(),
      }),
    ),
    products: z
      .array(z.object({ index: z.number().int(), id: z.uuid() }))
      .meta({ description: 'The created products by item index' }),
  })
  .meta({ id: 'ProductBatchResult' });

export const TenantCategorySchema = z
  .object({
    category: z.string(),
    title: z.string().nullable(),
    productCount: z.number().int(),
    statusCounts: z.record(z.string(), z.number().int()).meta({ description: 'Products per status' }),
    currentSchemaVersion: z.string().nullable(),
    lastUpdatedAt: Timestamp,
  })
  .meta({ id: 'TenantCategory' });
