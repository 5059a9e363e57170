import { z } from 'zod';
import { DATA_MATRIX_CONTENTS, LabelEpcSchema, type LabelEpc } from './carriers.js';

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
    /** A GS1 DataMatrix beside the QR code, with the Digital Link or the element string; absent or null: none. */
    dataMatrix: z.enum(DATA_MATRIX_CONTENTS).nullable().optional(),
    /** A GS1-128 barcode with the element string `(01)…(21)…` (logistics labels). */
    gs1128: z.boolean().optional(),
    /** An NFC tag with the Digital Link as an NDEF URI record (printers with an NFC encoder). */
    nfc: z.boolean().optional(),
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
  /** The SGTIN-96 of the label; null when its serial needs SGTIN-198 (then `epc` names it). */
  sgtin96_epc: z
    .string()
    .regex(/^[0-9A-F]{24}$/)
    .nullable(),
  /** The EPC the RFID tag carries, with its scheme (absent from envelopes of earlier control planes). */
  epc: LabelEpcSchema.optional(),
  label_template: LabelTemplateSchema,
  /** The passport version the label carries; the evidence bundle commits to it. */
  passport_version: PassportVersionRefSchema.nullable(),
  lease_expires_at: z.iso.datetime(),
});
export type AidcEnvelopeClaims = z.infer<typeof AidcEnvelopeClaimsSchema>;

/**
 * The EPC an envelope asks for: its `epc`, or the SGTIN-96 of an envelope from before `epc` existed.
 *
 * @example
 * envelopeEpc({ sgtin96_epc: '30343A0520B2C30000000001' }); // { scheme: 'sgtin-96', hex: '30343A...' }
 */
export function envelopeEpc(claims: Pick<AidcEnvelopeClaims, 'epc' | 'sgtin96_epc'>): LabelEpc {
  if (claims.epc) return claims.epc;
  if (claims.sgtin96_epc) return { scheme: 'sgtin-96', hex: claims.sgtin96_epc };
  throw new Error('the envelope names no EPC');
}
