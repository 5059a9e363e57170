import {
  type LabelEpc,
  type EpcScheme,
  SGTIN_FILTER,
  buildDigitalLink,
  encodeSgtin198,
  encodeSgtin96,
  gs1ElementString,
  sgtinPureIdentityUri,
} from '@dpp/shared';
import { COUNTER_FORM } from './model.js';

/** The codes of one label: the QR payload, the RFID EPC and the EPC URI EPCIS events name. */
export interface LabelCodes {
  /** GS1 Digital Link URI on the public base URL: `{base}/01/{gtin}/21/{serial}`, the serial percent-encoded. */
  digitalLink(serial: string): string;
  /** SGTIN-96, 24 upper-case hex digits, filter 1 (point of sale trade item); the serial must fit it. */
  sgtin96(serial: string): string;
  /** The EPC of the serial's tag in its scheme (SGTIN-96 or SGTIN-198), filter 1. */
  epc(serial: string, scheme: EpcScheme): LabelEpc;
  /** `urn:epc:id:sgtin:CompanyPrefix.IndicatorAndItemRef.Serial` (TDS §6.3.1), the serial GS3A3-escaped. */
  epcUri(serial: string): string;
  /** `(01)<gtin14>(21)<serial>`: the element string of a DataMatrix or GS1-128. */
  elementString(serial: string): string;
}

/** 2^38 - 1, the largest SGTIN-96 serial (TDS §14.5.1); 12 digits, exact as a number. */
const SGTIN96_MAX = 274_877_906_943;
/** An SGTIN-96 serial (as isSgtin96SafeSerial says) without a BigInt per label: the export's hot path. */
const fitsSgtin96 = (serial: string): boolean =>
  serial === '0' || (COUNTER_FORM.test(serial) && Number(serial) <= SGTIN96_MAX);

/**
 * The label codes of one GTIN. Everything but the serial is fixed for a GTIN, so for the numeric serials
 * the counter hands out (decimal, no leading zeros, at most 2^38 - 1) the codec runs once, on serial 0, and
 * each label only adds its serial: in SGTIN-96 the serial is the low 38 bits (TDS §14.5.1), in the URIs the
 * last segment, and a numeric serial needs no escaping. Any other serial (registered, alphanumeric) goes
 * through the codecs: percent-encoding in the Digital Link, GS3A3 escaping in the EPC URI, SGTIN-198. The
 * tests compare every code with `encodeSgtin96`, `encodeSgtin198` and `buildDigitalLink` of the same serial.
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
  const sgtin96 = (serial: string): string =>
    fitsSgtin96(serial)
      ? high + (low + Number(serial)).toString(16).toUpperCase().padStart(10, '0')
      : encodeSgtin96({ gtin, serial, filter: SGTIN_FILTER.POINT_OF_SALE, companyPrefixLength }).hex;
  return {
    digitalLink: (serial) =>
      COUNTER_FORM.test(serial) ? linkPrefix + serial : buildDigitalLink(publicBaseUrl, gtin, serial),
    sgtin96,
    epc: (serial, scheme) =>
      scheme === 'sgtin-96'
        ? { scheme, hex: sgtin96(serial) }
        : {
            scheme,
            hex: encodeSgtin198({ gtin, serial, filter: SGTIN_FILTER.POINT_OF_SALE, companyPrefixLength })
              .hex,
          },
    epcUri: (serial) =>
      COUNTER_FORM.test(serial)
        ? uriPrefix + serial
        : sgtinPureIdentityUri(gtin, serial, companyPrefixLength),
    elementString: (serial) => gs1ElementString(zero.gtin, serial),
  };
}
