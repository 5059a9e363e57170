/**
 * Who attests a print (PRINTED_ATTESTED), decided per label. The device attests only on evidence of its
 * own that the label physically came out:
 *
 * - `rfid_readback`: the tags of the printed label read back (`^HV`) equal what was written: the EPC of its
 *   UHF tag, and (`nfcReadBack`) the Digital Link of its NFC tag's NDEF URI record (NFC is HF RFID);
 * - `printer_status`: a ZPL printer on a two-way line whose `~HS` after the print shows the format left
 *   the buffer with nothing stopping the printer (no paper out, head open, pause, ribbon out).
 *
 * Otherwise a supervisor attests in the desktop app: a PDF printer, anything behind CUPS or a spool
 * folder (accepted by a queue says nothing about paper), or a printer configured `attestation: human`.
 * A spool submission never implies a print (api-v2.md, Print job lifecycle).
 */
import type { Attestation, PrinterStatus } from '@dpp/shared';
import type { Completion } from '../printers/index.js';

/** The part of a status worth keeping as evidence. */
export function statusEvidence(s: PrinterStatus): Record<string, unknown> {
  return {
    source: s.source,
    ready: s.ready,
    paperOut: s.paperOut,
    ribbonOut: s.ribbonOut,
    headOpen: s.headOpen,
    paused: s.paused,
    formatsInBuffer: s.formatsInBuffer,
    errors: s.errors,
  };
}

export function deviceAttestation(
  deviceId: string,
  completion: Completion,
  policy: 'auto' | 'human',
  at: Date,
): Attestation | null {
  if (policy === 'human' || completion.evidence !== 'printer') return null;
  const base = {
    actor: { type: 'device' as const, id: deviceId },
    ...(completion.statusAfter ? { printerStatus: statusEvidence(completion.statusAfter) } : {}),
    attestedAt: at.toISOString(),
  };
  if (completion.epcReadBack || completion.nfcReadBack) {
    return {
      ...base,
      method: 'rfid_readback',
      ...(completion.epcReadBack ? { epcReadBack: completion.epcReadBack } : {}),
      ...(completion.nfcReadBack ? { nfcReadBack: completion.nfcReadBack } : {}),
      ...(completion.voidLabels > 0
        ? { note: `${completion.voidLabels} VOID label(s) before this one` }
        : {}),
    };
  }
  if (completion.statusAfter?.ready && completion.statusAfter.formatsInBuffer === 0)
    return { ...base, method: 'printer_status' };
  return null;
}

export interface Supervisor {
  id: string;
  name?: string | undefined;
}

export function humanAttestation(supervisor: Supervisor, at: Date, note?: string): Attestation {
  return {
    actor: { type: 'human', id: supervisor.id, ...(supervisor.name ? { name: supervisor.name } : {}) },
    method: 'supervisor',
    ...(note ? { note } : {}),
    attestedAt: at.toISOString(),
  };
}
