import { z } from 'zod';
import { PassportVersionRefSchema } from './envelope.js';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex SHA-256');

/** `typ` of a signed tree head of the transparency log (docs/label-proof.md). */
export const TREE_HEAD_TYPE = 'dpp-tree-head+jws';

/** What a tree head signs (canonical JSON): the log had `treeSize` leaves with this root at `timestamp`. */
export const TreeHeadPayloadSchema = z.strictObject({
  iss: z.string(),
  /** The log's URL (…/api/v2/public/log). */
  log: z.string(),
  treeSize: z.number().int().nonnegative(),
  rootHash: sha256Hex,
  timestamp: z.iso.datetime(),
});
export type TreeHeadPayload = z.infer<typeof TreeHeadPayloadSchema>;

export const LABEL_PROOF_TYPE = 'dpp-label-proof';

/** One sealing of a label and what proves it (docs/label-proof.md). */
export const LabelSealProofSchema = z
  .object({
    jobRef: z.string(),
    passportVersion: PassportVersionRefSchema.nullable(),
    evidenceBundle: z
      .string()
      .meta({ description: 'Compact JWS (typ dpp-evidence+jws) signed by the device' }),
    deviceStatement: z
      .string()
      .meta({ description: 'Compact JWS (typ dpp-device-statement+jws) signed by the control plane' }),
    sealReceipt: z
      .string()
      .meta({ description: 'Compact JWS (typ dpp-seal-receipt+jws) signed by the control plane' }),
    epcisEvent: z.record(z.string(), z.unknown()).nullable().meta({
      description: 'The commissioning event the receipt names, as the EPCIS query interface returns it',
    }),
    log: z
      .object({
        leafIndex: z.number().int().nonnegative(),
        treeSize: z.number().int().positive(),
        inclusionProof: z.array(sha256Hex),
        treeHead: z.string().meta({ description: 'Compact JWS (typ dpp-tree-head+jws)' }),
      })
      .nullable()
      .meta({ description: 'Null until the sequencer has appended the receipt (about a second)' }),
  })
  .meta({ id: 'LabelSealProof' });

/** The proof of one label: what it carries and every time it was sealed. */
export const LabelProofSchema = z
  .object({
    type: z.literal(LABEL_PROOF_TYPE),
    version: z.literal(1),
    issuer: z.string(),
    label: z.object({
      gtin: z.string().regex(/^\d{14}$/),
      serial: z.string(),
      digitalLink: z.string(),
      status: z.enum(['sealed', 'voided']),
      voidedAt: z.iso.datetime().nullable(),
    }),
    seals: z.array(LabelSealProofSchema),
    links: z.object({ signingKeys: z.string(), treeHead: z.string(), consistency: z.string() }),
  })
  .meta({ id: 'LabelProof' });
export type LabelProof = z.infer<typeof LabelProofSchema>;

/**
 * The path of a label's proof under the control plane's base URL; the commissioning event's
 * certificationInfo and the resolver's typed link name it.
 *
 * @example
 * labelProofPath('09506000134352', 'A/1') // '/api/v2/public/labels/09506000134352/A%2F1/proof'
 */
export function labelProofPath(gtin: string, serial: string): string {
  return `/api/v2/public/labels/${gtin}/${encodeURIComponent(serial)}/proof`;
}
