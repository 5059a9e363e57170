/**
 * The data carriers a label can carry, as the wire contract names them: the template's choice, the EPC a
 * job encodes, and each carrier with its content as the evidence records it.
 *
 * | carrier      | content                                                                              |
 * | ------------ | ------------------------------------------------------------------------------------ |
 * | `qr`         | the GS1 Digital Link URI (always on the label: it is the passport's data carrier)     |
 * | `datamatrix` | GS1 DataMatrix: the Digital Link URI, or the element string `(01)…(21)…` with FNC1   |
 * | `gs1-128`    | GS1-128: the element string `(01)…(21)…`                                             |
 * | `rfid`       | the EPC on a UHF tag: SGTIN-96, or SGTIN-198 for serials SGTIN-96 cannot hold       |
 * | `nfc`        | an NFC tag whose NDEF message is one URI record with the Digital Link               |
 *
 * An element string is written in its human-readable form, each AI in parentheses followed by its value
 * (GS1 General Specifications §4.15); scanners transmit it with GS (0x1D) after a variable-length value,
 * and the agent turns that back into this form before comparing.
 */
import { z } from 'zod';

/** The EPC schemes a label's RFID tag can carry (GS1 EPC TDS §14.5.1 and §14.5.1.2). */
export const EPC_SCHEMES = ['sgtin-96', 'sgtin-198'] as const;
export type EpcScheme = (typeof EPC_SCHEMES)[number];

/** An EPC as the encoder writes it: whole 16-bit words in upper-case hex (96 bits = 24, 208 bits = 52 digits). */
export const EpcHexSchema = z
  .string()
  .regex(/^(?:[0-9A-F]{4}){6,32}$/, 'must be whole 16-bit words of upper-case hex');

/** The EPC of one label: its scheme and the bits the encoder writes. */
export const LabelEpcSchema = z
  .strictObject({ scheme: z.enum(EPC_SCHEMES), hex: EpcHexSchema })
  .meta({ id: 'LabelEpc' });
export type LabelEpc = z.infer<typeof LabelEpcSchema>;

/** What a DataMatrix on the label carries. */
export const DATA_MATRIX_CONTENTS = ['digital-link', 'element-string'] as const;
export type DataMatrixContent = (typeof DATA_MATRIX_CONTENTS)[number];

export const CARRIER_TYPES = ['qr', 'datamatrix', 'gs1-128', 'rfid', 'nfc'] as const;
export type CarrierType = (typeof CARRIER_TYPES)[number];

/** The symbols (printed, read by a scanner) among the carriers. */
export const SYMBOL_CARRIERS = ['qr', 'datamatrix', 'gs1-128'] as const satisfies readonly CarrierType[];
export type SymbolCarrierType = (typeof SYMBOL_CARRIERS)[number];

/**
 * One carrier on a label and its content. In a render manifest the content is what the agent decoded from
 * its own render (symbols) or will write (tags); in a scan result what the scanner read.
 */
export const LabelCarrierSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('qr'), data: z.string().max(2000) }),
    z.strictObject({
      type: z.literal('datamatrix'),
      content: z.enum(DATA_MATRIX_CONTENTS),
      data: z.string().max(2000),
    }),
    z.strictObject({ type: z.literal('gs1-128'), data: z.string().max(200) }),
    z.strictObject({ type: z.literal('rfid'), scheme: z.enum(EPC_SCHEMES), epc: EpcHexSchema }),
    z.strictObject({ type: z.literal('nfc'), uri: z.string().max(2000) }),
  ])
  .meta({ id: 'LabelCarrier' });
export type LabelCarrier = z.infer<typeof LabelCarrierSchema>;

/** The template fields that choose carriers beyond the QR code (all optional on the wire; absent = off). */
export interface TemplateCarrierChoice {
  rfid: boolean;
  dataMatrix?: DataMatrixContent | null | undefined;
  gs1128?: boolean | undefined;
  nfc?: boolean | undefined;
}

/**
 * The carriers a template puts on a label, in the order the evidence lists them.
 *
 * @example
 * templateCarriers({ rfid: true, dataMatrix: 'digital-link' }); // ['qr', 'datamatrix', 'rfid']
 */
export function templateCarriers(t: TemplateCarrierChoice): CarrierType[] {
  const out: CarrierType[] = ['qr'];
  if (t.dataMatrix) out.push('datamatrix');
  if (t.gs1128) out.push('gs1-128');
  if (t.rfid) out.push('rfid');
  if (t.nfc) out.push('nfc');
  return out;
}

/**
 * The GS1 element string of a GTIN and serial in its human-readable form: `(01)<gtin14>(21)<serial>`.
 *
 * @example
 * gs1ElementString('10950600830521', 'ABC-123'); // '(01)10950600830521(21)ABC-123'
 */
export function gs1ElementString(gtin14: string, serial: string): string {
  return `(01)${gtin14}(21)${serial}`;
}

/**
 * The content each carrier of a label must hold, from what a job names: the Digital Link, the GTIN and
 * serial, and the EPC. The evidence of every step is compared with this. `epc` may be null only when the
 * template carries no RFID tag.
 */
export function expectedCarriers(
  t: TemplateCarrierChoice,
  job: { digitalLink: string; gtin: string; serial: string; epc: LabelEpc | null },
): LabelCarrier[] {
  return templateCarriers(t).map((type): LabelCarrier => {
    switch (type) {
      case 'qr':
        return { type, data: job.digitalLink };
      case 'datamatrix':
        return t.dataMatrix === 'element-string'
          ? { type, content: 'element-string', data: gs1ElementString(job.gtin, job.serial) }
          : { type, content: 'digital-link', data: job.digitalLink };
      case 'gs1-128':
        return { type, data: gs1ElementString(job.gtin, job.serial) };
      case 'rfid':
        if (!job.epc) throw new Error('the template carries an RFID tag but the job names no EPC');
        return { type, scheme: job.epc.scheme, epc: job.epc.hex };
      case 'nfc':
        return { type, uri: job.digitalLink };
    }
  });
}
