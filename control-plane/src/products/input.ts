import { z } from 'zod';
import {
  isCodecError,
  isValidGs1Serial,
  normalizeGtin,
  GS1_SERIAL_MAX_LENGTH,
  SGTIN96_MAX_SERIAL,
  EPC_SCHEME_PREFERENCES,
} from '@dpp/shared';
import { ApiError, fieldPath } from '../http/index.js';
import { DEFAULT_COMPANY_PREFIX_LENGTH, GRANULARITIES } from './model.js';

/** Largest customData accepted, as serialized JSON. */
export const CUSTOM_DATA_MAX_BYTES = 64 * 1024;

/** A GTIN-8/12/13/14 with a valid check digit, normalised to 14 digits (GS1 General Specifications §3.3.2). */
export const GtinInput = z
  .string()
  .transform((v, ctx) => {
    try {
      return normalizeGtin(v);
    } catch (err) {
      if (!isCodecError(err)) throw err;
      ctx.issues.push({ code: 'custom', message: err.message, input: v });
      return z.NEVER;
    }
  })
  .meta({
    description: 'GTIN-8, -12, -13 or -14 with a valid check digit; stored and returned as 14 digits',
    example: '09506000134352',
  });

/**
 * AI (21) serial: 1 to 20 characters of GS1 character set 82 (GS1 General Specifications §3.5.2, §7.11).
 * An all-digit serial is also an SGTIN-96 serial, whose field has 38 bits (EPC TDS §14.5.1), so its value
 * must be at most 2^38 - 1 = 274877906943.
 */
export const SerialInput = z
  .string()
  .min(1, 'must not be empty')
  .max(GS1_SERIAL_MAX_LENGTH, `must be at most ${GS1_SERIAL_MAX_LENGTH} characters`)
  .superRefine((v, ctx) => {
    if (v.length > GS1_SERIAL_MAX_LENGTH || v.length === 0) return;
    if (!isValidGs1Serial(v)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must use GS1 AI (21) characters only (no spaces, #, $, @, ~)',
      });
    } else if (/^\d+$/.test(v) && BigInt(v) > SGTIN96_MAX_SERIAL) {
      ctx.addIssue({
        code: 'custom',
        message: `a numeric serial must be at most 2^38 - 1 (${SGTIN96_MAX_SERIAL}) for SGTIN-96 carriers`,
      });
    }
  })
  .meta({ description: 'At most 20 characters; a numeric serial at most 2^38 - 1', example: '10001' });

const JsonObject = z
  .record(z.string(), z.unknown())
  .refine((v) => JSON.stringify(v).length <= CUSTOM_DATA_MAX_BYTES, {
    message: `must be at most ${CUSTOM_DATA_MAX_BYTES} bytes as JSON`,
  });

/** Free text stored as is: PostgreSQL text cannot hold NUL, and no product text needs it. */
export const noNul = (v: string) => !v.includes('\u0000');
const NUL_MESSAGE = 'must not contain NUL characters';

const Name = z
  .string()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .refine((v) => v.trim().length > 0, 'must not be blank')
  .refine(noNul, NUL_MESSAGE);
const Description = z
  .string()
  .min(10, 'must be at least 10 characters')
  .max(10_000, 'must be at most 10000 characters')
  .refine(noNul, NUL_MESSAGE);
const Category = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a category name such as electronics');
const Jurisdiction = z.string().regex(/^[A-Za-z]{2,8}$/, 'must be a jurisdiction code such as EU');
const CompanyPrefixLength = z
  .number()
  .int('must be an integer')
  .min(6, 'must be at least 6')
  .max(12, 'must be at most 12')
  .meta({
    description: `Digits of the GS1 Company Prefix in the GTIN (6 to 12; default ${DEFAULT_COMPANY_PREFIX_LENGTH}); the SGTIN-96 codec reads it from here`,
  });

const EpcSchemeChoice = z.enum(EPC_SCHEME_PREFERENCES).meta({
  description:
    'EPC scheme of its RFID tags: auto (default: SGTIN-96 when the serial fits, SGTIN-198 otherwise), sgtin-96 or sgtin-198',
});

/** Body of POST /products and each item of /products/batch and of an ingest (api-v2.md, Product create request). */
export const ProductCreateSchema = z
  .object({
    name: Name.meta({ description: 'Product name; returned as productName' }),
    description: Description.meta({ description: 'At least 10 characters; returned as productDescription' }),
    category: Category.meta({
      description: 'Must resolve to a schema effective now, else 422 SCHEMA_NOT_FOUND',
    }),
    gtin: GtinInput,
    serialNumber: SerialInput,
    extensions: z.record(z.string(), z.unknown()).nullable().optional().meta({
      description:
        'Category-specific fields, validated against the effective schema. Required: missing is 422 EXTENSIONS_REQUIRED',
    }),
    status: z
      .literal('Draft', { error: 'only Draft is accepted on create; use lifecycle/transition afterwards' })
      .optional(),
    jurisdiction: Jurisdiction.optional().meta({ description: 'Jurisdiction of the schema; EU by default' }),
    granularity: z.enum(GRANULARITIES).optional().meta({ description: 'model (default), batch or item' }),
    companyPrefixLength: CompanyPrefixLength.optional(),
    epcScheme: EpcSchemeChoice.optional(),
    customData: JsonObject.nullable()
      .optional()
      .meta({ description: 'Free-form JSON object, at most 64 KiB' }),
  })
  .strict()
  .meta({ id: 'ProductCreate' });

export type ProductCreateInput = z.output<typeof ProductCreateSchema>;

/** Body of PATCH and PUT /products/{id}: any subset of the create fields; extensions and customData merge. */
export const ProductUpdateSchema = z
  .object({
    name: Name.optional(),
    description: Description.optional(),
    category: Category.optional().meta({
      description: 'Changing the category replaces extensions: send the new category extensions in full',
    }),
    gtin: GtinInput.optional(),
    serialNumber: SerialInput.optional(),
    jurisdiction: Jurisdiction.optional(),
    granularity: z.enum(GRANULARITIES).optional(),
    companyPrefixLength: CompanyPrefixLength.optional(),
    epcScheme: EpcSchemeChoice.optional(),
    extensions: z.record(z.string(), z.unknown()).nullable().optional().meta({
      description:
        'JSON merge patch (RFC 7396) of the extensions: a member set to null removes that field; the result is validated against the effective schema',
    }),
    customData: JsonObject.nullable()
      .optional()
      .meta({ description: 'JSON merge patch of customData; null clears it' }),
  })
  .strict()
  .meta({ id: 'ProductUpdate' });

export type ProductUpdateInput = z.output<typeof ProductUpdateSchema>;

/**
 * Parses one item against a schema without throwing: the error names the field relative to the item
 * (`description`, `extensions.weeeCategory`), as batch and ingest errors need.
 */
export function parseItem<T>(
  schema: z.ZodType<T>,
  value: unknown,
): { ok: true; value: T } | { ok: false; error: ApiError } {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues.map((i) => {
    const keys = i.code === 'unrecognized_keys' ? i.keys : [];
    const field = fieldPath(i.path) || (keys.length ? keys[0]! : 'item');
    return {
      field,
      message: i.code === 'unrecognized_keys' ? `is not a known field` : i.message,
      code: i.code,
    };
  });
  const first = issues[0]!;
  return {
    ok: false,
    error: ApiError.validation(first.field, `${first.field}: ${first.message}`, { issues }),
  };
}
