import { z } from 'zod';

/** `typ` of the JWS the control plane signs for each claimed attempt. */
export const AIDC_ENVELOPE_TYPE = 'dpp-aidc-envelope+jws';

export const LabelTemplateSchema = z
  .object({
    id: z.string(),
    widthMm: z.number().positive(),
    heightMm: z.number().positive(),
    dpi: z.union([z.literal(203), z.literal(300), z.literal(600)]),
    qrMagnification: z.number().int().min(1).max(10),
    textLines: z.array(z.string().max(200)).max(6),
    rfid: z.boolean(),
  })
  .meta({ id: 'LabelTemplate' });
export type LabelTemplate = z.infer<typeof LabelTemplateSchema>;

/**
 * The passport version a label carries: the product's published version when the job was claimed, with its
 * content hash and the Merkle root publish-dpp signed (lower-case hex SHA-256).
 */
export const PassportVersionRefSchema = z.strictObject({
  id: z.string(),
  contentHash: z.string().regex(/^[0-9a-f]{64}$/),
  merkleRoot: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PassportVersionRef = z.infer<typeof PassportVersionRefSchema>;

/**
 * The claims of a signed AIDC envelope (JWS, EdDSA, keys at /.well-known/jwks.json). The agent refuses an
 * envelope that does not verify, whose `aud` is not its device id, or that has expired, and prints it on no
 * printer but the one named in `printer` (the printer the attempt was claimed for).
 */
export const AidcEnvelopeClaimsSchema = z.object({
  iss: z.string(),
  aud: z.string(),
  jti: z.string(),
  iat: z.number().int(),
  exp: z.number().int(),
  job_ref: z.string(),
  attempt_id: z.string(),
  tenant_id: z.string(),
  printer: z.string(),
  gtin: z.string().regex(/^\d{14}$/),
  serial: z.string(),
  digital_link: z.url(),
  sgtin96_epc: z.string().regex(/^[0-9A-F]{24}$/),
  label_template: LabelTemplateSchema,
  /** The passport version the label carries; the evidence bundle commits to it. */
  passport_version: PassportVersionRefSchema.nullable(),
  lease_expires_at: z.iso.datetime(),
});
export type AidcEnvelopeClaims = z.infer<typeof AidcEnvelopeClaimsSchema>;
