/** Hashes and the render manifest (the evidence of RENDERED). */
import { createHash } from 'node:crypto';
import type { AidcEnvelopeClaims, RenderManifest } from '@dpp/shared';

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
    previewSha256: sha256Hex(input.preview),
    renderedAt: input.renderedAt.toISOString(),
  };
}
