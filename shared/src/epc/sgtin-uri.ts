/**
 * SGTIN pure identity URIs, `urn:epc:id:sgtin:CompanyPrefix.IndicatorAndItemRef.Serial`.
 *
 * GS1 EPC TDS §6.3.1 (SGTIN pure identity URI) and §7.1 (GTIN + serial ⇄ SGTIN): the GTIN-14 without its
 * check digit is split as indicator digit d1, company prefix d2..d(L+1), item reference d(L+2)..d13; the
 * URI writes the company prefix, then the indicator digit moved in front of the item reference. The
 * serial is a GS3A3 component (TDS §5): set-82 characters, with `"`, `%`, `&`, `/`, `<`, `>` and `?`
 * written as `%22 %25 %26 %2F %3C %3E %3F`.
 */
import { CodecError } from '../errors/codec-error.js';
import { computeGs1CheckDigit, normalizeGtin } from '../gs1/gtin.js';
import { assertGs1Serial } from '../gs1/serial.js';

/** Characters TDS §5 requires to be escaped in a GS3A3 URI component, with their escapes. */
const GS3A3_ESCAPES: Readonly<Record<string, string>> = {
  '"': '%22',
  '%': '%25',
  '&': '%26',
  '/': '%2F',
  '<': '%3C',
  '>': '%3E',
  '?': '%3F',
};
const GS3A3_UNESCAPES: ReadonlyMap<string, string> = new Map(
  Object.entries(GS3A3_ESCAPES).map(([ch, esc]) => [esc, ch]),
);

/**
 * A serial as a GS3A3 URI component (TDS §5): the seven characters that must be escaped are.
 *
 * @example
 * escapeGs3a3('32a/b'); // '32a%2Fb'
 */
export function escapeGs3a3(serial: string): string {
  return [...serial].map((ch) => GS3A3_ESCAPES[ch] ?? ch).join('');
}

/**
 * A GS3A3 URI component back to its characters. A literal character that must be escaped, a stray `%` or
 * an escape TDS §5 does not define throws `CodecError` `INVALID_SERIAL`.
 *
 * @example
 * unescapeGs3a3('32a%2Fb'); // '32a/b'
 */
export function unescapeGs3a3(component: string): string {
  // TDS §5: these characters appear only escaped; a literal one (or a stray '%') is malformed.
  if (/[%"&/<>?]/.test(component.replace(/%[0-9A-Fa-f]{2}/g, ''))) {
    throw new CodecError(
      'INVALID_SERIAL',
      `serial ${JSON.stringify(component)} has a character that must be escaped`,
    );
  }
  return component.replace(/%[0-9A-Fa-f]{2}/g, (esc) => {
    const ch = GS3A3_UNESCAPES.get(esc.toUpperCase());
    if (ch === undefined)
      throw new CodecError('INVALID_SERIAL', `escape ${esc} is not allowed in an EPC URI`);
    return ch;
  });
}

/** The pieces of an SGTIN: company prefix digits and indicator + item reference digits. */
export interface SgtinParts {
  companyPrefix: string;
  indicatorAndItemReference: string;
}

/**
 * Returns a GS1 Company Prefix length of 6..12 unchanged, else throws `INVALID_COMPANY_PREFIX_LENGTH`.
 *
 * @example
 * assertCompanyPrefixLength(7); // 7
 */
export function assertCompanyPrefixLength(length: number): number {
  if (!Number.isInteger(length) || length < 6 || length > 12) {
    throw new CodecError(
      'INVALID_COMPANY_PREFIX_LENGTH',
      `companyPrefixLength must be an integer from 6 to 12 (TDS Table 14-2), got ${String(length)}`,
    );
  }
  return length;
}

/**
 * Splits a valid GTIN (any length) at the company prefix boundary, TDS §7.1.
 *
 * @example
 * splitGtin('80614141123458', 7); // { companyPrefix: '0614141', indicatorAndItemReference: '812345' }
 */
export function splitGtin(gtin: string, companyPrefixLength: number): SgtinParts {
  const gtin14 = normalizeGtin(gtin);
  const length = assertCompanyPrefixLength(companyPrefixLength);
  return {
    companyPrefix: gtin14.slice(1, 1 + length),
    indicatorAndItemReference: `${gtin14.slice(0, 1)}${gtin14.slice(1 + length, 13)}`,
  };
}

/**
 * Rebuilds the GTIN-14 (with a freshly computed check digit) from its SGTIN parts, TDS §7.1.
 *
 * @example
 * joinGtin({ companyPrefix: '0614141', indicatorAndItemReference: '812345' }); // '80614141123458'
 */
export function joinGtin(parts: SgtinParts): string {
  const body = `${parts.indicatorAndItemReference.slice(0, 1)}${parts.companyPrefix}${parts.indicatorAndItemReference.slice(1)}`;
  return `${body}${computeGs1CheckDigit(body)}`;
}

/**
 * The SGTIN pure identity URI of a GTIN and AI (21) serial (any set-82 serial, not only SGTIN-96 ones).
 *
 * @example
 * sgtinPureIdentityUri('80614141123458', '6789', 7); // 'urn:epc:id:sgtin:0614141.812345.6789'
 */
export function sgtinPureIdentityUri(gtin: string, serial: string, companyPrefixLength: number): string {
  const { companyPrefix, indicatorAndItemReference } = splitGtin(gtin, companyPrefixLength);
  const escaped = escapeGs3a3(assertGs1Serial(serial));
  return `urn:epc:id:sgtin:${companyPrefix}.${indicatorAndItemReference}.${escaped}`;
}

/** A parsed SGTIN pure identity URI. */
export interface SgtinIdentity {
  gtin: string;
  serial: string;
  companyPrefixLength: number;
}

const PURE_SGTIN = /^urn:epc:id:sgtin:([0-9]{6,12})\.([0-9]{1,7})\.(.+)$/;

/**
 * Parses `urn:epc:id:sgtin:CompanyPrefix.IndicatorAndItemRef.Serial`. The two numeric fields must hold 13
 * digits together; the serial is unescaped and must be a valid AI (21) serial.
 * Throws `CodecError` `INVALID_EPC` or `INVALID_SERIAL`.
 *
 * @example
 * parseSgtinPureIdentityUri('urn:epc:id:sgtin:0614141.812345.6789');
 * // { gtin: '80614141123458', serial: '6789', companyPrefixLength: 7 }
 */
export function parseSgtinPureIdentityUri(uri: string): SgtinIdentity {
  const match = typeof uri === 'string' ? PURE_SGTIN.exec(uri) : null;
  const [, companyPrefix, indicatorAndItemReference, rawSerial] = match ?? [];
  if (
    companyPrefix === undefined ||
    indicatorAndItemReference === undefined ||
    rawSerial === undefined ||
    companyPrefix.length + indicatorAndItemReference.length !== 13
  ) {
    throw new CodecError('INVALID_EPC', `not an SGTIN pure identity URI: ${JSON.stringify(uri)}`);
  }
  const serial = unescapeGs3a3(rawSerial);
  return {
    gtin: joinGtin({ companyPrefix, indicatorAndItemReference }),
    serial: assertGs1Serial(serial),
    companyPrefixLength: companyPrefix.length,
  };
}
