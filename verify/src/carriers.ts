/**
 * The carriers of a label as its evidence names them (render manifest `carriers`, scan result `carriers`,
 * attestation `nfcReadBack`): each must hold what the label's GTIN, serial and Digital Link say, and each
 * was verified after printing (a symbol scanned, an NFC tag read back; the EPC is checked on its own).
 * A bundle from before carriers were listed names only its QR code and SGTIN-96, and has none of this.
 */
import { Broken, obj, optStr, str, type Json } from './shape.js';

export interface LabelKey {
  gtin: string;
  serial: string;
  digitalLink: string;
}

interface Carrier {
  type: string;
  /** What the carrier holds: the data of a symbol, the EPC of a tag, the URI of an NFC record. */
  content: string;
  /** Which DataMatrix form, when it is one. */
  form?: string;
  /** The EPC scheme of an RFID tag. */
  scheme?: string;
}

const SYMBOLS = new Set(['qr', 'datamatrix', 'gs1-128']);
const NAMES: Record<string, string> = {
  qr: 'QR code',
  datamatrix: 'DataMatrix',
  'gs1-128': 'GS1-128',
  rfid: 'RFID',
  nfc: 'NFC',
};

function readCarrier(v: unknown, what: string): Carrier {
  const c = obj(v, what);
  const type = str(c, 'type', what);
  switch (type) {
    case 'qr':
    case 'gs1-128':
      return { type, content: str(c, 'data', what) };
    case 'datamatrix':
      return { type, content: str(c, 'data', what), form: str(c, 'content', what) };
    case 'rfid':
      return { type, content: str(c, 'epc', what), scheme: str(c, 'scheme', what) };
    case 'nfc':
      return { type, content: str(c, 'uri', what) };
    default:
      throw new Broken(`${what} is a carrier of type ${type}, which this verifier does not know`);
  }
}

/** The carriers a manifest or scan lists, or undefined when it lists none (evidence from before the list). */
export function readCarriers(o: Json, what: string): Carrier[] | undefined {
  const list = o.carriers;
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) throw new Broken(`${what}.carriers is not a list`);
  return list.map((c, i) => readCarrier(c, `${what}.carriers[${i}]`));
}

/** The EPC the render's carriers name for the RFID tag, if any. */
export function renderedRfidEpc(render: Json): string | undefined {
  return readCarriers(render, 'renderManifest')?.find((c) => c.type === 'rfid')?.content;
}

/** The content a symbol or NFC carrier must hold for this label. */
function expectedContent(c: Carrier, label: LabelKey): string | undefined {
  const elementString = `(01)${label.gtin}(21)${label.serial}`;
  switch (c.type) {
    case 'qr':
    case 'nfc':
      return label.digitalLink;
    case 'gs1-128':
      return elementString;
    case 'datamatrix':
      if (c.form === 'digital-link') return label.digitalLink;
      if (c.form === 'element-string') return elementString;
      throw new Broken(`a DataMatrix of form ${String(c.form)}, which this verifier does not know`);
    default:
      return undefined; // the EPC is checked with the reads of the tag
  }
}

function describe(c: Carrier): string {
  if (c.type === 'datamatrix')
    return `DataMatrix (${c.form === 'element-string' ? 'element string' : 'Digital Link'})`;
  if (c.type === 'rfid') return `RFID ${String(c.scheme).toUpperCase()}`;
  return NAMES[c.type] ?? c.type;
}

/**
 * Checks every carrier the render lists against the label and against what was read after printing; returns
 * how they read ("QR code, DataMatrix (Digital Link), RFID SGTIN-96"), or undefined for a bundle without the
 * list.
 */
export function checkCarriers(
  label: LabelKey,
  render: Json,
  attestation: Json,
  scan: Json,
): string | undefined {
  const rendered = readCarriers(render, 'renderManifest');
  if (rendered === undefined) return undefined;
  const scanned = readCarriers(scan, 'scanResult') ?? [];
  if (!rendered.some((c) => c.type === 'qr')) throw new Broken('the render lists no QR code');
  for (const c of rendered) {
    const expected = expectedContent(c, label);
    if (expected !== undefined && c.content !== expected) {
      throw new Broken(`the rendered ${describe(c)} holds ${c.content}, the label is ${expected}`);
    }
    if (SYMBOLS.has(c.type)) {
      const read = scanned.find((s) => s.type === c.type && s.form === c.form);
      if (read === undefined) throw new Broken(`the ${describe(c)} was rendered but never scanned`);
      if (read.content !== c.content) {
        throw new Broken(`the scanner read ${describe(c)} ${read.content}, rendered ${c.content}`);
      }
    }
    if (c.type === 'nfc') {
      const readBack = optStr(attestation, 'nfcReadBack', 'attestation');
      if (readBack === undefined) throw new Broken('the NFC tag was never read back');
      if (readBack !== c.content) throw new Broken(`the NFC tag read back ${readBack}, written ${c.content}`);
    }
  }
  for (const s of scanned) {
    if (!rendered.some((c) => c.type === s.type && c.form === s.form)) {
      throw new Broken(`the scanner read a ${describe(s)} the render does not list`);
    }
  }
  return rendered.map(describe).join(', ');
}
