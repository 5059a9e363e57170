/** Hashes and the render manifest (the evidence of RENDERED). */
import { createHash } from 'node:crypto';
import {
  envelopeEpc,
  expectedCarriers,
  type AidcEnvelopeClaims,
  type LabelCarrier,
  type RenderManifest,
} from '@dpp/shared';
import type { EffectiveTemplate } from './template.js';

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function renderManifest(input: {
  claims: AidcEnvelopeClaims;
  language: 'zpl' | 'pdf';
  templateId: string;
  payload: Buffer;
  decodedLink: string;
  rfid: boolean;
  /** Every carrier of the label: symbols as decoded from this render, tags as they will be written. */
  carriers: LabelCarrier[];
  preview: Buffer;
  renderedAt: Date;
}): RenderManifest {
  return {
    language: input.language,
    template: input.templateId.slice(0, 100),
    payloadSha256: sha256Hex(input.payload),
    payloadBytes: input.payload.length,
    digitalLink: input.decodedLink,
    qrVerified: true,
    ...(input.rfid && input.claims.sgtin96_epc ? { sgtin96Epc: input.claims.sgtin96_epc } : {}),
    carriers: input.carriers,
    previewSha256: sha256Hex(input.preview),
    renderedAt: input.renderedAt.toISOString(),
  };
}

/**
 * The carriers a label of `template` must hold for this job, in the order the evidence lists them (the
 * effective template: RFID only where the printer writes it).
 */
export function jobCarriers(claims: AidcEnvelopeClaims, template: EffectiveTemplate): LabelCarrier[] {
  return expectedCarriers(template, {
    digitalLink: claims.digital_link,
    gtin: claims.gtin,
    serial: claims.serial,
    epc: template.rfid ? envelopeEpc(claims) : null,
  });
}
