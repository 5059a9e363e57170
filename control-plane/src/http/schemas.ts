import { z } from 'zod';

/** The error envelope (api-v2.md, Errors). `code` is absent where the spec lists "no code". */
export const ErrorEnvelopeSchema = z
  .object({
    error: z.object({
      code: z
        .string()
        .optional()
        .meta({ description: 'Machine-readable code; absent on 401, 405 and a plain 404/409' }),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

export const UuidParam = z.object({ id: z.uuid() });

/** Wraps a schema in the `{ data }` envelope list and read operations use. */
export function dataEnvelope<T extends z.ZodType>(schema: T) {
  return z.object({ data: schema });
}
