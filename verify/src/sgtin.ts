/**
 * SGTIN-96 (GS1 EPC Tag Data Standard 2.1 §14.5.1) decoding and the SGTIN pure-identity URI (TDS §6.3.1), to
 * tie a label's EPC to its GTIN and serial and to the URI the EPCIS event commissions.
 */
import { Broken } from './shape.js';

const SGTIN96_HEADER = 0x30n;

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

/** Decodes 24 hex digits of an SGTIN-96 EPC; throws Broken when they are not one. */
export function decodeSgtin96(hex: string): Sgtin {
  if (!/^[0-9A-Fa-f]{24}$/.test(hex)) throw new Broken(`EPC ${hex} is not 96 bits of hex`);
  const v = BigInt(`0x${hex}`);
  if (bits(v, 88, 8) !== SGTIN96_HEADER) throw new Broken(`EPC ${hex} is not an SGTIN-96 (header 0x30)`);
  const filter = Number(bits(v, 85, 3));
  const p = PARTITIONS[Number(bits(v, 82, 3))];
  if (p === undefined) throw new Broken(`EPC ${hex} has partition 7, which TDS does not define`);
  const cp = bits(v, 82 - p.cpBits, p.cpBits);
  const ir = bits(v, 38, p.irBits);
  const serial = bits(v, 0, 38).toString();
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
    pureIdentityUri: `urn:epc:id:sgtin:${cpText}.${irText}.${serial}`,
  };
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
