/**
 * SGTIN-96 and SGTIN-198 (GS1 EPC Tag Data Standard 2.1 §14.5.1) decoding and the SGTIN pure-identity URI
 * (TDS §6.3.1), to tie a label's EPC to its GTIN and serial and to the URI the EPCIS event commissions.
 */
import { Broken } from './shape.js';

const SGTIN96_HEADER = 0x30n;
const SGTIN198_HEADER = 0x36n;

/** TDS 2.1 Table 14-2, SGTIN partition: company prefix bits and digits, item reference bits and digits. */
const PARTITIONS: readonly { cpBits: number; cpDigits: number; irBits: number; irDigits: number }[] = [
  { cpBits: 40, cpDigits: 12, irBits: 4, irDigits: 1 },
  { cpBits: 37, cpDigits: 11, irBits: 7, irDigits: 2 },
  { cpBits: 34, cpDigits: 10, irBits: 10, irDigits: 3 },
  { cpBits: 30, cpDigits: 9, irBits: 14, irDigits: 4 },
  { cpBits: 27, cpDigits: 8, irBits: 17, irDigits: 5 },
  { cpBits: 24, cpDigits: 7, irBits: 20, irDigits: 6 },
  { cpBits: 20, cpDigits: 6, irBits: 24, irDigits: 7 },
];

export interface Sgtin {
  gtin: string;
  serial: string;
  companyPrefixLength: number;
  filter: number;
  pureIdentityUri: string;
}

/** GS1 General Specifications §7.9.1: the check digit of the 13 digits before it. */
export function gtinCheckDigit(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    const d = Number(body[body.length - 1 - i]);
    sum += i % 2 === 0 ? d * 3 : d;
  }
  return String((10 - (sum % 10)) % 10);
}

const bits = (value: bigint, from: number, count: number): bigint =>
  (value >> BigInt(from)) & ((1n << BigInt(count)) - 1n);

/**
 * Filter, partition, company prefix and item reference, which SGTIN-96 and SGTIN-198 lay out alike right
 * after their header; `top` is the bit index just below the header.
 */
function decodeSgtinHead(hex: string, v: bigint, top: number, serial: string): Sgtin {
  const filter = Number(bits(v, top - 3, 3));
  const p = PARTITIONS[Number(bits(v, top - 6, 3))];
  if (p === undefined) throw new Broken(`EPC ${hex} has partition 7, which TDS does not define`);
  const cp = bits(v, top - 6 - p.cpBits, p.cpBits);
  const ir = bits(v, top - 50, p.irBits);
  if (cp >= 10n ** BigInt(p.cpDigits) || ir >= 10n ** BigInt(p.irDigits)) {
    throw new Broken(`EPC ${hex} has a company prefix or item reference too large for its partition`);
  }
  const cpText = cp.toString().padStart(p.cpDigits, '0');
  const irText = ir.toString().padStart(p.irDigits, '0');
  const body = irText[0]! + cpText + irText.slice(1);
  return {
    gtin: body + gtinCheckDigit(body),
    serial,
    companyPrefixLength: p.cpDigits,
    filter,
    pureIdentityUri: `urn:epc:id:sgtin:${cpText}.${irText}.${escapeSerial(serial)}`,
  };
}

/** Decodes 24 hex digits of an SGTIN-96 EPC; throws Broken when they are not one. */
export function decodeSgtin96(hex: string): Sgtin {
  if (!/^[0-9A-Fa-f]{24}$/.test(hex)) throw new Broken(`EPC ${hex} is not 96 bits of hex`);
  const v = BigInt(`0x${hex}`);
  if (bits(v, 88, 8) !== SGTIN96_HEADER) throw new Broken(`EPC ${hex} is not an SGTIN-96 (header 0x30)`);
  return decodeSgtinHead(hex, v, 88, bits(v, 0, 38).toString());
}

/** GS1 General Specifications Figure 7.11-1 (character set 82), the characters an SGTIN-198 serial may hold. */
const SET_82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]$/;

/**
 * Decodes an SGTIN-198 EPC (TDS §14.5.1.2: header 0x36, then as SGTIN-96 up to the item reference, then a
 * serial of up to 20 seven-bit characters, zero-padded to 140 bits): 50 hex digits as TDS writes it (200
 * bits) or 52 as a tag holds it (13 words); the bits past the 198th must be zero.
 */
export function decodeSgtin198(hex: string): Sgtin {
  if (!/^(?:[0-9A-Fa-f]{50}|[0-9A-Fa-f]{52})$/.test(hex)) {
    throw new Broken(`EPC ${hex} is not 198 bits of hex (50 or 52 digits)`);
  }
  const width = hex.length * 4;
  const v = BigInt(`0x${hex}`);
  if (bits(v, width - 8, 8) !== SGTIN198_HEADER) {
    throw new Broken(`EPC ${hex} is not an SGTIN-198 (header 0x36)`);
  }
  if (bits(v, 0, width - 198) !== 0n) throw new Broken(`EPC ${hex} has bits set past its 198th`);
  let serial = '';
  let ended = false;
  for (let i = 0; i < 20; i++) {
    const code = Number(bits(v, width - 58 - 7 * (i + 1), 7));
    if (code === 0) {
      ended = true;
      continue;
    }
    const ch = String.fromCharCode(code);
    if (ended || !SET_82.test(ch)) {
      throw new Broken(`EPC ${hex} has a serial that is not GS1 character set 82 padded with zeros`);
    }
    serial += ch;
  }
  if (serial.length === 0) throw new Broken(`EPC ${hex} has an empty serial`);
  return decodeSgtinHead(hex, v, width - 8, serial);
}

/** Decodes an SGTIN EPC of either scheme, by its header. */
export function decodeSgtin(hex: string): Sgtin {
  return /^36/.test(hex) ? decodeSgtin198(hex) : decodeSgtin96(hex);
}

/** TDS §6.3.1 / Table I.3.1-1: the characters of a serial that a pure-identity URI percent-encodes. */
function escapeSerial(serial: string): string {
  return serial.replace(/["%&/<>?]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The SGTIN pure-identity URI of a GTIN-14 and serial with a company prefix of `companyPrefixLength`. */
export function sgtinPureIdentityUri(gtin: string, serial: string, companyPrefixLength: number): string {
  if (!/^\d{14}$/.test(gtin)) throw new Broken(`GTIN ${gtin} is not 14 digits`);
  if (companyPrefixLength < 6 || companyPrefixLength > 12) {
    throw new Broken(`a company prefix of ${companyPrefixLength} digits is not one TDS defines`);
  }
  const cp = gtin.slice(1, 1 + companyPrefixLength);
  const ir = gtin[0]! + gtin.slice(1 + companyPrefixLength, 13);
  return `urn:epc:id:sgtin:${cp}.${ir}.${escapeSerial(serial)}`;
}

/** The company prefix length of an SGTIN pure-identity URI (the digits before its first dot), or null. */
export function companyPrefixLengthOf(uri: string): number | null {
  const m = /^urn:epc:id:sgtin:(\d+)\.\d+\./.exec(uri);
  return m ? m[1]!.length : null;
}
