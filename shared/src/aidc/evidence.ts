import { z } from 'zod';
import { EpcHexSchema, LabelCarrierSchema } from './carriers.js';
import { PassportVersionRefSchema } from './envelope.js';
import type { ResultState } from './states.js';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256');

/** RENDERED: what was rendered, and proof the QR decodes to the expected link. */
export const RenderManifestSchema = z
  .object({
    language: z.enum(['zpl', 'pdf']),
    template: z.string().max(100),
    /** SHA-256 of the exact bytes that will be sent to the printer. */
    payloadSha256: sha256Hex,
    payloadBytes: z.number().int().positive(),
    digitalLink: z.url(),
    /** The rendered QR was decoded locally and equals `digitalLink`. */
    qrVerified: z.literal(true),
    sgtin96Epc: z
      .string()
      .regex(/^[0-9A-F]{24}$/)
      .optional(),
    /**
     * Every carrier on the label with its content: symbols as decoded from this render, tags as they will be
     * written. Absent from manifests of agents before carriers beyond QR and SGTIN-96.
     */
    carriers: z.array(LabelCarrierSchema).min(1).max(8).optional(),
    /** SHA-256 of a preview image (PNG), when one was made. */
    previewSha256: sha256Hex.optional(),
    renderedAt: z.iso.datetime(),
  })
  .meta({ id: 'RenderManifest' });

/** SPOOL_SUBMITTED: the bytes left for the printer. */
export const SpoolReceiptSchema = z
  .object({
    printer: z.string().max(64),
    transport: z.enum(['serial', 'tcp', 'usb', 'cups', 'spool']),
    bytes: z.number().int().positive(),
    payloadSha256: sha256Hex,
    /** CUPS job id, spool file name, the device path, or a USB printer: `usb:<serial number> via /dev/usb/lp0`. */
    reference: z.string().max(500).optional(),
    submittedAt: z.iso.datetime(),
  })
  .meta({ id: 'SpoolReceipt' });

/** PRINTED_ATTESTED: who says the label is physically printed, and on what evidence. */
export const AttestationSchema = z
  .object({
    actor: z.object({
      type: z.enum(['device', 'human']),
      id: z.string().max(100),
      name: z.string().max(100).optional(),
    }),
    method: z.enum(['printer_status', 'rfid_readback', 'supervisor']),
    /** Host status after the print (e.g. from ~HS) showing no error. */
    printerStatus: z.record(z.string(), z.unknown()).optional(),
    /** EPC read back from the tag (^HV) and equal to the envelope's (SGTIN-96: 24 hex digits, SGTIN-198: 52). */
    epcReadBack: EpcHexSchema.optional(),
    /** The URI of the NDEF record read back from the NFC tag, equal to the Digital Link. */
    nfcReadBack: z.string().max(2000).optional(),
    note: z.string().max(500).optional(),
    attestedAt: z.iso.datetime(),
  })
  .meta({ id: 'PrintAttestation' });

/**
 * The attestation as an evidence bundle carries it. A bundle is published with the label's proof, so it
 * names a person only by id (never by name) and carries no free-text note; the control plane keeps both
 * with the reported attestation.
 *
 * @example
 * publicAttestation({ actor: { type: 'human', id: 'badge-17', name: 'Ana' }, method: 'supervisor', note: 'ok', attestedAt })
 * // { actor: { type: 'human', id: 'badge-17' }, method: 'supervisor', attestedAt }
 */
export function publicAttestation(a: Attestation): Attestation {
  const { note: _note, actor, ...rest } = a;
  return { ...rest, actor: { type: actor.type, id: actor.id } };
}

/** SCAN_VERIFIED: the printed label read back and compared. */
export const ScanResultSchema = z
  .object({
    scanner: z.string().max(64),
    decodedLink: z.string().max(2000),
    linkMatches: z.literal(true),
    epcRead: EpcHexSchema.optional(),
    epcMatches: z.boolean().optional(),
    /** Every symbol the scanner decoded on the label (QR, DataMatrix, GS1-128) with its content. */
    carriers: z.array(LabelCarrierSchema).max(8).optional(),
    scannedAt: z.iso.datetime(),
  })
  .meta({ id: 'ScanResult' });

/** SEALED: a compact JWS signed by the device key over the whole evidence of the attempt. */
export const EvidenceBundleSchema = z
  .object({
    jws: z.string().max(64_000),
  })
  .meta({ id: 'EvidenceBundle' });

/** What the evidence bundle JWS signs (its payload, canonical JSON). */
export const EvidenceBundlePayloadSchema = z.strictObject({
  jobRef: z.string(),
  attemptId: z.string(),
  deviceId: z.string(),
  envelopeJti: z.string(),
  /** The passport version printed, as the claim's envelope named it. */
  passportVersion: PassportVersionRefSchema.nullable(),
  renderManifest: RenderManifestSchema,
  spoolReceipt: SpoolReceiptSchema,
  attestation: AttestationSchema,
  scanResult: ScanResultSchema,
  sealedAt: z.iso.datetime(),
});
export type EvidenceBundlePayload = z.infer<typeof EvidenceBundlePayloadSchema>;

export const EVIDENCE_BUNDLE_TYPE = 'dpp-evidence+jws';

/** `typ` of the seal receipt the control plane countersigns at SEALED (JWS under /.well-known/jwks.json). */
export const SEAL_RECEIPT_TYPE = 'dpp-seal-receipt+jws';

/**
 * What a seal receipt signs (canonical JSON): the control plane verified this label's evidence bundle (by its
 * hash) and recorded its EPCIS commissioning event (by eventID and the hash of its canonical JSON) at
 * `sealedAt`.
 */
export const SealReceiptPayloadSchema = z.strictObject({
  iss: z.string(),
  jobRef: z.string(),
  attemptId: z.string(),
  deviceId: z.string(),
  gtin: z.string().regex(/^\d{14}$/),
  serial: z.string(),
  digitalLink: z.string(),
  passportVersionId: z.string().nullable(),
  /** SHA-256 of the evidence bundle as the device sent it (the compact JWS, ASCII). */
  bundleSha256: sha256Hex,
  /** The commissioning event; null when the serial had been printed (and commissioned) before. */
  epcisEvent: z.strictObject({ eventId: z.string(), sha256: sha256Hex }).nullable(),
  sealedAt: z.iso.datetime(),
});
export type SealReceiptPayload = z.infer<typeof SealReceiptPayloadSchema>;

export const FailureSchema = z
  .object({
    reason: z.string().min(1).max(100),
    detail: z.string().max(1000).optional(),
  })
  .meta({ id: 'PrintFailure' });

export type RenderManifest = z.infer<typeof RenderManifestSchema>;
export type SpoolReceipt = z.infer<typeof SpoolReceiptSchema>;
export type Attestation = z.infer<typeof AttestationSchema>;
export type ScanResult = z.infer<typeof ScanResultSchema>;

/**
 * The evidence artifact each result carries, by the name it has in a result's `evidence` object and in
 * the job's evidence list (api-v2.md: evidence artifacts).
 *
 * @example
 * EVIDENCE_KIND.SPOOL_SUBMITTED // 'spool_receipt'
 */
export const EVIDENCE_KIND = {
  RENDERED: 'render_manifest',
  SPOOL_SUBMITTED: 'spool_receipt',
  PRINTED_ATTESTED: 'attestation',
  SCAN_VERIFIED: 'scan_result',
  SEALED: 'evidence_bundle',
  FAILED: 'failure',
} as const satisfies Record<ResultState, string>;
export type EvidenceKind = (typeof EVIDENCE_KIND)[ResultState];

/**
 * The `evidence` object of each result: exactly its one artifact, checked by the control plane before the
 * transition.
 *
 * @example
 * RESULT_EVIDENCE.FAILED.parse({ failure: { reason: 'printer_offline' } })
 */
export const RESULT_EVIDENCE = {
  RENDERED: z.object({ render_manifest: RenderManifestSchema }),
  SPOOL_SUBMITTED: z.object({ spool_receipt: SpoolReceiptSchema }),
  PRINTED_ATTESTED: z.object({ attestation: AttestationSchema }),
  SCAN_VERIFIED: z.object({ scan_result: ScanResultSchema }),
  SEALED: z.object({ evidence_bundle: EvidenceBundleSchema }),
  FAILED: z.object({ failure: FailureSchema }),
} satisfies { [S in ResultState]: z.ZodObject<Record<(typeof EVIDENCE_KIND)[S], z.ZodType>> };

export type Failure = z.infer<typeof FailureSchema>;

/**
 * The artifact a result in state S carries.
 *
 * @example
 * const receipt: EvidenceOf<'SPOOL_SUBMITTED'> = { printer: 'line-1', transport: 'tcp', ... }
 */
export type EvidenceOf<S extends ResultState> =
  z.infer<(typeof RESULT_EVIDENCE)[S]> extends infer E ? E[keyof E] : never; // each has its one artifact
