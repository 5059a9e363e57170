import { isCodecError, normalizeGtin } from '@dpp/shared';
import { z } from 'zod';
import { BATCH_MAX_COUNT, PRINT_STATES, PRINT_STATUS_MAX_RESULTS } from './model.js';

/** A GTIN-8/12/13/14 with a valid check digit, normalised to 14 digits. */
const Gtin = z.string().transform((v, ctx) => {
  try {
    return normalizeGtin(v);
  } catch (err) {
    if (!isCodecError(err)) throw err;
    ctx.issues.push({ code: 'custom', message: err.message, input: v });
    return z.NEVER;
  }
});

export const BatchBody = z
  .object({
    productId: z.uuid().meta({ description: 'The product the serials are for' }),
    count: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(BATCH_MAX_COUNT, `must be at most ${BATCH_MAX_COUNT}`)
      .optional()
      .meta({
        description: `Serials to allocate from the workspace's counter, 1 to ${BATCH_MAX_COUNT}; exactly one of count and serials`,
      }),
    serials: z
      .array(z.string().max(100, 'must be at most 100 characters'))
      .min(1, 'must hold at least one serial')
      .max(BATCH_MAX_COUNT, `must hold at most ${BATCH_MAX_COUNT} serials`)
      .optional()
      .meta({
        description:
          'Serials to register instead of allocating: each an AI (21) serial (1 to 20 characters of GS1 ' +
          'character set 82), none twice, none already in the workspace, none of the counter form (decimal ' +
          'without a leading zero); all or nothing. Exactly one of count and serials',
      }),
  })
  .strict()
  .superRefine((b, ctx) => {
    if ((b.count === undefined) === (b.serials === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['count'], message: 'send exactly one of count and serials' });
    }
  })
  // count stays required for a request without serials: the document says so with oneOf.
  .meta({ id: 'CarrierBatchRequest', oneOf: [{ required: ['count'] }, { required: ['serials'] }] });

export const BatchResponse = z
  .object({
    batchId: z.uuid(),
    productId: z.uuid(),
    gtin: z.string().meta({ description: '14 digits' }),
    allocated: z
      .number()
      .int()
      .meta({ description: 'How many serials were allocated (= count) or registered' }),
    serials: z.array(z.string()).meta({
      description:
        'The serials in export order: allocated ones ascending (decimal, no leading zeros), registered ones as sent',
    }),
    exportPath: z.string().meta({ description: 'The print file of this batch (GET /carriers/export)' }),
  })
  .meta({ id: 'CarrierBatch' });

export const ExportQuery = z.object({
  productId: z.uuid().optional().meta({ description: "Only this product's serials" }),
  batchId: z
    .uuid()
    .optional()
    .meta({ description: "Only this batch's serials (exportPath of carrier.generated)" }),
  format: z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(['csv', 'json']))
    .optional()
    .meta({ description: 'csv (default) or json' }),
  printState: z
    .string()
    .optional()
    .meta({
      description: `${PRINT_STATES.join(', ')}; failed is exactly the re-print file. Another value is 422 INVALID_PRINT_STATE`,
    }),
});

export const PrintResult = z
  .object({
    serial: z.string().min(1, 'must not be empty').max(20, 'must be at most 20 characters'),
    status: z.enum(['printed', 'failed']),
    reason: z.string().max(1000, 'must be at most 1000 characters').optional(),
    deviceId: z.string().max(200, 'must be at most 200 characters').optional(),
    gtin: Gtin.optional().meta({
      description: 'When given, the serial must belong to this GTIN, else it is unknown',
    }),
  })
  .strict();

export const PrintStatusBody = z
  .object({
    results: z
      .array(PrintResult)
      .min(1, 'must hold at least one result')
      .max(PRINT_STATUS_MAX_RESULTS, `must hold at most ${PRINT_STATUS_MAX_RESULTS} results per call`),
  })
  .strict()
  .meta({ id: 'PrintStatusReport' });

export const PrintStatusResponse = z
  .object({
    reportRef: z.uuid().meta({ description: 'Shared by every event of this report' }),
    updated: z.array(z.string()).meta({ description: 'Known serials whose outcome was written' }),
    unknown: z
      .array(z.string())
      .meta({ description: 'Serials not found for the tenant (or not under the gtin sent)' }),
    printed: z.array(z.string()),
    failed: z.array(z.string()),
    reportedAt: z.iso.datetime(),
    events: z.array(
      z.object({
        type: z.enum(['print.confirmed', 'print.failed']),
        dispatch: z.enum(['queued', 'queue_failed']),
        chunks: z
          .number()
          .int()
          .optional()
          .meta({ description: 'print.failed: events sharing the reportRef' }),
      }),
    ),
  })
  .meta({ id: 'PrintStatusResult' });
