/**
 * The print-job HTTP contract of api-v2.md ("Print jobs"), defined once: the job as the API shows it, the
 * claim, the heartbeat and the result. The control plane validates requests and documents replies with
 * these schemas; the agent parses the replies with them.
 */
import { z } from 'zod';
import { isTopicLevel } from '../mqtt/topics.js';
import { LabelEpcSchema } from './carriers.js';
import { LabelTemplateSchema } from './envelope.js';
import { JOB_STATES, RESULT_STATES } from './states.js';

/** `job_` + 20 base32 characters: sortable by creation (a time prefix) and unguessable. */
export const JobRefSchema = z
  .string()
  .regex(/^job_[0-9a-v]{10}[0-9a-f]{10}$/, 'must be a job reference (job_...)');

/** A printer name is an MQTT topic level (the printer's status topic), so it cannot hold / + or #. */
export const PrinterNameSchema = z.string().min(1).max(64).refine(isTopicLevel, 'must not contain /, + or #');

/**
 * A print job as every print-job operation answers it.
 *
 * @example
 * PrintJobSchema.shape.state.parse('CLAIMED')
 */
export const PrintJobSchema = z
  .object({
    jobRef: JobRefSchema,
    state: z.enum(JOB_STATES),
    productId: z.string(),
    gtin: z.string(),
    serial: z.string(),
    digitalLink: z.string(),
    /** The SGTIN-96 hex; null when the serial is encoded as SGTIN-198 (see `epc`). */
    sgtin96Epc: z.string().nullable(),
    /** The EPC the label's RFID tag carries, with its scheme. */
    epc: LabelEpcSchema,
    printer: z.string().nullable(),
    labelTemplate: LabelTemplateSchema,
    attemptId: z
      .string()
      .nullable()
      .meta({ description: 'The current attempt: the fencing token of every result' }),
    attemptCount: z.number().int(),
    maxAttempts: z.number().int(),
    deviceId: z.string().nullable(),
    leaseExpiresAt: z.iso.datetime().nullable(),
    lastError: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    terminalAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'PrintJob' });
export type PrintJob = z.infer<typeof PrintJobSchema>;

export const PrintAttemptSchema = z.object({
  attemptId: z.string(),
  number: z.number().int(),
  deviceId: z.string(),
  printer: z.string(),
  state: z.string(),
  claimedAt: z.iso.datetime(),
  endedAt: z.iso.datetime().nullable(),
  failureReason: z.string().nullable(),
});
export type PrintAttempt = z.infer<typeof PrintAttemptSchema>;

export const PrintEvidenceSchema = z.object({
  attemptId: z.string(),
  state: z.string(),
  kind: z.string(),
  payload: z.unknown(),
  actor: z.object({ type: z.string(), id: z.string().nullable() }),
  recordedAt: z.iso.datetime(),
});
export type PrintEvidence = z.infer<typeof PrintEvidenceSchema>;

/** GET /aidc/jobs/{ref}: the job with every attempt and every piece of evidence. */
export const PrintJobDetailSchema = PrintJobSchema.extend({
  attempts: z.array(PrintAttemptSchema),
  evidence: z.array(PrintEvidenceSchema),
  /**
   * The control plane's seal receipt of a SEALED job (a compact JWS, typ dpp-seal-receipt+jws, keys at
   * /.well-known/jwks.json; its payload is SealReceiptPayloadSchema); null before SEALED.
   */
  sealReceipt: z.string().nullable(),
}).meta({ id: 'PrintJobDetail' });
export type PrintJobDetail = z.infer<typeof PrintJobDetailSchema>;

/**
 * POST /aidc/jobs/claim: the printer a device claims for, whether it encodes RFID and whether it has an NFC
 * encoder (a job whose template has `nfc` goes only to such a printer).
 */
export const ClaimRequestSchema = z
  .object({
    printer: z.object({
      name: PrinterNameSchema,
      rfid: z.boolean().default(false),
      /** Absent: no NFC encoder. */
      nfc: z.boolean().optional(),
    }),
  })
  .meta({ id: 'ClaimRequest' });
export type ClaimRequest = z.infer<typeof ClaimRequestSchema>;

/**
 * The `data` of a 200 claim: the job, the attempt that fences its results (`attempt_id`, the spec's name, as in
 * every request that sends it back), the envelope and the lease.
 */
export const ClaimedSchema = z
  .object({
    job: PrintJobSchema,
    attempt_id: z.uuid().meta({
      description:
        'The attempt this claim opened: send it back as attempt_id with every heartbeat and result',
    }),
    envelope: z.string().meta({ description: 'The signed AIDC envelope (compact JWS) of this attempt' }),
    leaseExpiresAt: z.iso.datetime(),
  })
  .meta({ id: 'Claimed' });
export type Claimed = z.infer<typeof ClaimedSchema>;

/** POST /aidc/jobs/{ref}/heartbeat. */
export const HeartbeatRequestSchema = z
  .object({
    attempt_id: z.uuid(),
    sending: z
      .boolean()
      .optional()
      .meta({
        description:
          'The send gate: true right before the device sends the label to the printer. Granted only on a ' +
          'live lease; from then on the label may be out, so the attempt is never reaped into a re-print ' +
          'and its device may renew the lease after it ran out.',
      }),
  })
  .meta({ id: 'Heartbeat' });
export type HeartbeatRequest = z.infer<typeof HeartbeatRequestSchema>;

/** The `data` of a 200 heartbeat: the new lease expiry and an envelope that carries it. */
export const HeartbeatAnswerSchema = z.object({ leaseExpiresAt: z.iso.datetime(), envelope: z.string() });
export type HeartbeatAnswer = z.infer<typeof HeartbeatAnswerSchema>;

/**
 * POST /aidc/jobs/{ref}/result. `evidence` holds the one artifact of the status ({@link RESULT_EVIDENCE}),
 * checked once the job and the attempt are known.
 */
export const PrintResultSchema = z
  .object({
    status: z.enum(RESULT_STATES),
    evidence: z.record(z.string(), z.unknown()),
    attempt_id: z.uuid(),
  })
  .meta({ id: 'PrintResult' });
export type PrintResult = z.infer<typeof PrintResultSchema>;

/** How many jobs one batch claim may take, over all its printers. */
export const MAX_CLAIMS_PER_CALL = 64;
/** How many results one batch may carry. */
export const MAX_RESULTS_PER_CALL = 200;

/**
 * POST /aidc/jobs/claims: one call claims for several printers, and up to `count` jobs for each (a printer
 * prefetches the next label while the current one prints). Each claim is exactly the single claim's.
 *
 * @example
 * ClaimBatchRequestSchema.parse({ printers: [{ name: 'zebra-1', rfid: true, count: 2 }] })
 */
export const ClaimBatchRequestSchema = z
  .object({
    printers: z
      .array(
        z.object({
          name: PrinterNameSchema,
          rfid: z.boolean().default(false),
          nfc: z.boolean().optional(),
          count: z.number().int().min(1).max(MAX_CLAIMS_PER_CALL).default(1),
        }),
      )
      .min(1)
      .max(MAX_CLAIMS_PER_CALL)
      .refine((ps) => new Set(ps.map((p) => p.name)).size === ps.length, 'each printer at most once')
      .refine(
        (ps) => ps.reduce((n, p) => n + p.count, 0) <= MAX_CLAIMS_PER_CALL,
        `at most ${MAX_CLAIMS_PER_CALL} claims in all`,
      ),
  })
  .meta({ id: 'ClaimBatchRequest' });
export type ClaimBatchRequest = z.infer<typeof ClaimBatchRequestSchema>;

/** The `data` of a batch claim: what each claim took, printer by printer in request order (empty: no work). */
export const ClaimBatchSchema = z
  .array(ClaimedSchema.extend({ printer: PrinterNameSchema }))
  .meta({ id: 'ClaimBatch' });
export type ClaimBatch = z.infer<typeof ClaimBatchSchema>;

/**
 * POST /aidc/jobs/results: results that happen together (several printers, or several steps of one job),
 * applied in order, each exactly as POST /aidc/jobs/{jobRef}/result would with its own Idempotency-Key.
 *
 * @example
 * ResultBatchRequestSchema.shape.results.element.shape.idempotencyKey
 */
export const ResultBatchRequestSchema = z
  .object({
    results: z
      .array(
        PrintResultSchema.extend({
          jobRef: JobRefSchema,
          idempotencyKey: z.uuid().meta({
            description:
              "This result's Idempotency-Key: the same key on the single result route replays the same answer",
          }),
        }),
      )
      .min(1)
      .max(MAX_RESULTS_PER_CALL),
  })
  .meta({ id: 'ResultBatchRequest' });
export type ResultBatchRequest = z.infer<typeof ResultBatchRequestSchema>;

/**
 * One result's answer in a batch: the status and body the single result route would have answered
 * (`{ data: PrintJob }`, or the error envelope), and `replayed` when it is the kept answer of its key.
 */
export const ResultOutcomeSchema = z
  .object({
    jobRef: JobRefSchema,
    status: z.number().int(),
    replayed: z.boolean().optional(),
    data: PrintJobSchema.optional(),
    error: z
      .object({
        code: z.string().optional(),
        message: z.string(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
  })
  .meta({ id: 'ResultOutcome' });
export type ResultOutcome = z.infer<typeof ResultOutcomeSchema>;
