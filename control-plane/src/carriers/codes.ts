import { SGTIN_FILTER, buildDigitalLink, encodeSgtin96 } from '@dpp/shared';

/** The codes of one label: the QR payload, the RFID EPC and the EPC URI EPCIS events name. */
export interface LabelCodes {
  /** GS1 Digital Link URI on the public base URL: `{base}/01/{gtin}/21/{serial}`. */
  digitalLink(serial: string): string;
  /** SGTIN-96, 24 upper-case hex digits, filter 1 (point of sale trade item). */
  sgtin96(serial: string): string;
  /** `urn:epc:id:sgtin:CompanyPrefix.IndicatorAndItemRef.Serial` (TDS §6.3.1). */
  epcUri(serial: string): string;
}

/**
 * The label codes of one GTIN, for numeric serials the carriers domain allocated (decimal, no leading
 * zeros, at most 2^38 - 1). Everything but the serial is fixed for a GTIN, so the codec runs once, on
 * serial 0, and each label only adds its serial: in SGTIN-96 the serial is the low 38 bits (TDS
 * §14.5.1), in the URIs the last segment, and a numeric serial needs no escaping. The tests compare
 * every code with `encodeSgtin96` and `buildDigitalLink` of the same serial.
 */
export function labelCodes(publicBaseUrl: string, gtin: string, companyPrefixLength: number): LabelCodes {
  const zero = encodeSgtin96({ gtin, serial: '0', filter: SGTIN_FILTER.POINT_OF_SALE, companyPrefixLength });
  const linkPrefix = buildDigitalLink(publicBaseUrl, gtin, '0').slice(0, -1);
  const uriPrefix = zero.pureIdentityUri.slice(0, -1);
  // The top 14 hex digits (56 bits) hold header, filter, partition, company prefix and most of the item
  // reference; the low 10 (40 bits) hold the item reference's last 2 bits and the 38-bit serial, which is
  // below 2^53, so plain number addition is exact.
  const high = zero.hex.slice(0, 14);
  const low = parseInt(zero.hex.slice(14), 16);
  return {
    digitalLink: (serial) => linkPrefix + serial,
    sgtin96: (serial) => high + (low + Number(serial)).toString(16).toUpperCase().padStart(10, '0'),
    epcUri: (serial) => uriPrefix + serial,
  };
}
