/**
 * The command envelope of POST /passports/commands (api-v2.md): every field validated, and a field at
 * the wrong level answered with 400 VALIDATION_ERROR naming it (`disclosureTier` sent beside `payload`,
 * `tenantId` sent inside it).
 */
import { z } from 'zod';
import { DISCLOSURE_TIERS } from './model.js';
import { SECTION_NAME } from './content.js';
import { COMMAND_NAMES, type CommandName } from './transitions.js';

const Uuid = z.uuid({ error: 'must be a UUID' });

export interface PayloadField {
  description: string;
  required: boolean;
  schema: z.ZodType;
}

const passportId: PayloadField = {
  description: 'The passport (its product id)',
  required: true,
  schema: Uuid,
};
const reason = (required: boolean): PayloadField => ({
  description: 'Why; recorded on the command and in the lifecycle log',
  required,
  schema: z.string().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters'),
});

/** Payload fields per command: the envelope parser and the catalog both read this. */
export const COMMAND_PAYLOADS: Readonly<Record<CommandName, Readonly<Record<string, PayloadField>>>> = {
  SUBMIT: { passportId, reason: reason(false) },
  APPROVE: { passportId, reason: reason(false) },
  REJECT: { passportId, reason: reason(true) },
  EDIT: {
    passportId,
    updates: {
      description:
        'Sections of the working content to change, keyed by section name, each an object of fields (null removes a field)',
      required: true,
      schema: z
        .record(z.string().regex(SECTION_NAME, 'is not a section name'), z.record(z.string(), z.unknown()))
        .refine((u) => Object.keys(u).length > 0, 'must name at least one section'),
    },
    reason: reason(false),
  },
  PUBLISH: {
    passportId,
    disclosureTier: {
      description: `Who the published passport is for: ${DISCLOSURE_TIERS.join(', ')} (only public is served by the public route)`,
      required: true,
      schema: z.enum(DISCLOSURE_TIERS, { error: `must be one of ${DISCLOSURE_TIERS.join(', ')}` }),
    },
    reason: reason(false),
  },
  SUSPEND: { passportId, reason: reason(true) },
  REINSTATE: { passportId, reason: reason(false) },
  REVOKE: {
    passportId,
    reason: reason(true),
    successorPassportId: {
      description:
        'The passport that replaces this one: the 410 answers link to it (rel="successor-version")',
      required: false,
      schema: Uuid,
    },
  },
  ARCHIVE: { passportId, reason: reason(false) },
  RECYCLE: { passportId, reason: reason(false) },
};

/** Envelope fields (api-v2.md, POST /passports/commands). */
export const ENVELOPE_FIELDS = [
  'type',
  'tenantId',
  'idempotencyKey',
  'actorId',
  'correlationId',
  'requestedAt',
  'causationId',
  'payload',
] as const;

const PAYLOAD_FIELD_NAMES = new Set(Object.values(COMMAND_PAYLOADS).flatMap((p) => Object.keys(p)));
const COMMAND_TYPES = COMMAND_NAMES.map((c) => `PASSPORT.${c}` as const);

const EnvelopeShape = z
  .strictObject({
    type: z
      .enum(COMMAND_TYPES, {
        error: `must be one of ${COMMAND_TYPES.join(', ')} (see GET /api/v2/passports/commands)`,
      })
      .meta({
        description: 'Dotted wire format PASSPORT.<NAME>',
      }),
    tenantId: Uuid.meta({ description: 'Your tenant id (must be the tenant of the credential)' }),
    idempotencyKey: Uuid.meta({
      description: 'Replaying the same key returns the first result; another body under it is 409',
    }),
    actorId: Uuid.meta({
      description: 'The executing user id: metadata only, authorization comes from the credential',
    }),
    correlationId: Uuid.meta({ description: 'Request-tracing id' }),
    requestedAt: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' }),
    causationId: Uuid.optional().meta({ description: 'Id of the causing command or event' }),
    payload: z.record(z.string(), z.unknown()).meta({
      description: 'passportId plus the fields of the command (GET /api/v2/passports/commands lists them)',
    }),
  })
  .meta({ id: 'PassportCommand' });

export type CommandEnvelope = z.infer<typeof EnvelopeShape>;

type Ctx = z.RefinementCtx;
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Misplaced and unknown fields, named, before the shape is checked. */
function checkPlacement(raw: unknown, ctx: Ctx): void {
  if (!isRecord(raw)) return;
  for (const key of Object.keys(raw)) {
    if ((ENVELOPE_FIELDS as readonly string[]).includes(key)) continue;
    ctx.addIssue({
      code: 'custom',
      path: [key],
      message: PAYLOAD_FIELD_NAMES.has(key)
        ? `belongs in the payload (payload.${key}), not at the top level of the envelope`
        : `is not a field of the command envelope (fields: ${ENVELOPE_FIELDS.join(', ')})`,
    });
  }
  const payload = raw.payload;
  if (!isRecord(payload)) return;
  for (const key of Object.keys(payload)) {
    if ((ENVELOPE_FIELDS as readonly string[]).includes(key)) {
      ctx.addIssue({
        code: 'custom',
        path: ['payload', key],
        message: `belongs at the top level of the envelope (${key}), not in the payload`,
      });
    }
  }
}

/** The payload fields of the envelope's command, all of them or only `passportId`. */
function checkPayload(env: CommandEnvelope, ctx: Ctx, only?: 'passportId'): void {
  const all = typeof env.type === 'string' ? COMMAND_PAYLOADS[env.type.slice(9) as CommandName] : undefined;
  if (!all || !isRecord(env.payload)) return;
  const fields = only ? { [only]: all[only]! } : all;
  if (!only) {
    for (const key of Object.keys(env.payload)) {
      if (key in all || (ENVELOPE_FIELDS as readonly string[]).includes(key)) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['payload', key],
        message: `is not a field of ${env.type} (payload fields: ${Object.keys(all).join(', ')})`,
      });
    }
  }
  for (const [name, field] of Object.entries(fields)) {
    const value = env.payload[name];
    if (value === undefined) {
      if (field.required)
        ctx.addIssue({ code: 'custom', path: ['payload', name], message: `is required for ${env.type}` });
      continue;
    }
    const parsed = field.schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        ctx.addIssue({
          code: 'custom',
          path: ['payload', name, ...issue.path.map((p) => p as string | number)],
          message: issue.message,
        });
      }
    }
  }
}

/**
 * The body schema of POST /passports/commands: the envelope, its fields in their places, and the passport it
 * names. The command's own payload fields are checked by {@link CommandPayloadSchema} once the passport's
 * state allows the command, so a refusal by state (409 INVALID_TRANSITION, 403 GUARD_REJECTED) is never
 * turned into a 400 by the payload of a command that could not run anyway.
 */
export const CommandEnvelopeSchema = z.preprocess(
  (raw, ctx) => {
    checkPlacement(raw, ctx);
    return raw;
  },
  EnvelopeShape.superRefine((env, ctx) => checkPayload(env, ctx, 'passportId')),
);

/** Every payload field of the envelope's command: required ones present, each valid, no other. */
export const CommandPayloadSchema = EnvelopeShape.superRefine((env, ctx) => checkPayload(env, ctx));
