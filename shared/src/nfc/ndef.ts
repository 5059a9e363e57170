/**
 * NDEF for the NFC tag of a label: one URI record (NFC Forum URI RTD 1.0) in one NDEF message (NFC Forum
 * NDEF 1.0), wrapped in the TLV block an NFC Forum Type 2 tag keeps in its data area (Type 2 Tag Operation
 * Specification §2.3). The record is a short record (SR) of TNF 0x01 (NFC Forum well-known type) with type
 * `U`; its payload is one URI identifier code, which abbreviates a prefix such as `https://`, then the rest
 * of the URI in UTF-8.
 */
import { CodecError } from '../errors/codec-error.js';

/**
 * The URI identifier codes, by code (NFC Forum URI RTD 1.0, Table 3). 0x00 abbreviates nothing; codes from
 * 0x24 on are reserved.
 */
export const NDEF_URI_PREFIXES: readonly string[] = [
  '',
  'http://www.',
  'https://www.',
  'http://',
  'https://',
  'tel:',
  'mailto:',
  'ftp://anonymous:anonymous@',
  'ftp://ftp.',
  'ftps://',
  'sftp://',
  'smb://',
  'nfs://',
  'ftp://',
  'dav://',
  'news:',
  'telnet://',
  'imap:',
  'rtsp://',
  'urn:',
  'pop:',
  'sip:',
  'sips:',
  'tftp:',
  'btspp://',
  'btl2cap://',
  'btgoep://',
  'tcpobex://',
  'irdaobex://',
  'file://',
  'urn:epc:id:',
  'urn:epc:tag:',
  'urn:epc:pat:',
  'urn:epc:raw:',
  'urn:epc:',
  'urn:nfc:',
];

/** NDEF record header flags (NFC Forum NDEF 1.0 §3.2). */
const MB = 0x80;
const ME = 0x40;
const CF = 0x20;
const SR = 0x10;
const IL = 0x08;
const TNF_WELL_KNOWN = 0x01;
const TYPE_URI = 0x55; // 'U'

/** Type 2 tag TLV tags (Type 2 Tag Operation Specification §2.3). */
const TLV_NULL = 0x00;
const TLV_NDEF = 0x03;
const TLV_TERMINATOR = 0xfe;

function invalid(message: string, details?: Record<string, unknown>): CodecError {
  return new CodecError('INVALID_NDEF', message, details ? { details } : {});
}

/** The identifier code whose prefix is the longest one `uri` starts with (0 when none). */
function prefixCode(uri: string): number {
  let best = 0;
  NDEF_URI_PREFIXES.forEach((prefix, code) => {
    if (prefix.length > NDEF_URI_PREFIXES[best]!.length && uri.startsWith(prefix)) best = code;
  });
  return best;
}

/**
 * One NDEF message holding one short URI record, the identifier code abbreviating the longest prefix.
 *
 * @example
 * encodeNdefUriMessage('https://id.example.com/01/09506000134352/21/2');
 * // D1 01 24 55 04 'id.example.com/01/09506000134352/21/2'
 */
export function encodeNdefUriMessage(uri: string): Uint8Array {
  if (uri.length === 0) throw invalid('the URI is empty');
  if (/\p{Cc}/u.test(uri)) throw invalid('the URI contains a control character', { uri });
  const code = prefixCode(uri);
  const rest = new TextEncoder().encode(uri.slice(NDEF_URI_PREFIXES[code]!.length));
  const payloadLength = 1 + rest.length;
  if (payloadLength > 255) {
    throw invalid(`the URI is too long for a short record (payload of ${payloadLength} bytes, at most 255)`, {
      uri,
    });
  }
  return new Uint8Array([MB | ME | SR | TNF_WELL_KNOWN, 1, payloadLength, TYPE_URI, code, ...rest]);
}

/**
 * The URI of an NDEF message that is exactly one short, unchunked well-known `U` record; anything else
 * (several records, another type, a reserved identifier code, bytes left over, bad UTF-8) is refused.
 *
 * @example
 * decodeNdefUriMessage(encodeNdefUriMessage('https://example.com/a')); // 'https://example.com/a'
 */
export function decodeNdefUriMessage(message: Uint8Array): string {
  if (message.length < 3) throw invalid(`an NDEF message of ${message.length} bytes has no record`);
  const header = message[0]!;
  if ((header & (MB | ME)) !== (MB | ME)) throw invalid('the NDEF message is not exactly one record');
  if (header & CF) throw invalid('the NDEF record is chunked');
  if ((header & 0x07) !== TNF_WELL_KNOWN)
    throw invalid(`the NDEF record's TNF is ${header & 0x07}, not 1 (well-known)`);
  if (!(header & SR)) throw invalid('the NDEF record is not a short record');
  const typeLength = message[1]!;
  const payloadLength = message[2]!;
  const idLength = header & IL ? message[3]! : 0;
  const typeAt = header & IL ? 4 : 3;
  const payloadAt = typeAt + typeLength + idLength;
  if (payloadAt + payloadLength !== message.length) {
    throw invalid('the NDEF record does not fill the message exactly', {
      bytes: message.length,
      expected: payloadAt + payloadLength,
    });
  }
  if (typeLength !== 1 || message[typeAt] !== TYPE_URI) throw invalid('the NDEF record is not of type U');
  if (payloadLength < 1) throw invalid('the URI record has no identifier code');
  const code = message[payloadAt]!;
  const prefix = NDEF_URI_PREFIXES[code];
  if (prefix === undefined) throw invalid(`URI identifier code 0x${code.toString(16)} is reserved`);
  let rest: string;
  try {
    rest = new TextDecoder('utf-8', { fatal: true }).decode(message.subarray(payloadAt + 1));
  } catch (err) {
    throw new CodecError('INVALID_NDEF', 'the URI is not UTF-8', { cause: err });
  }
  return prefix + rest;
}

/**
 * The bytes of a Type 2 tag's data area holding one NDEF message: the NDEF TLV (tag 0x03, a one-byte length
 * below 255, else 0xFF and two bytes), then the terminator TLV 0xFE.
 *
 * @example
 * encodeType2NdefTlv(new Uint8Array([0xd1, 1, 1, 0x55, 0])); // 03 05 D1 01 01 55 00 FE
 */
export function encodeType2NdefTlv(message: Uint8Array): Uint8Array {
  if (message.length > 0xfffe) throw invalid(`an NDEF message of ${message.length} bytes is too long`);
  const length =
    message.length < 0xff ? [message.length] : [0xff, message.length >> 8, message.length & 0xff];
  return new Uint8Array([TLV_NDEF, ...length, ...message, TLV_TERMINATOR]);
}

/**
 * The NDEF message of a Type 2 tag's data area: NULL TLVs are skipped, other TLVs (lock and memory
 * control) are stepped over by their length, the first NDEF TLV is the answer. A terminator before any NDEF
 * TLV, or data that ends inside a TLV, is refused.
 *
 * @example
 * decodeType2NdefTlv(new Uint8Array([0x03, 0x00, 0xfe])); // Uint8Array [] (an empty NDEF message)
 */
export function decodeType2NdefTlv(area: Uint8Array): Uint8Array {
  let at = 0;
  while (at < area.length) {
    const tag = area[at]!;
    if (tag === TLV_NULL) {
      at++;
      continue;
    }
    if (tag === TLV_TERMINATOR) throw invalid('the tag holds no NDEF message (terminator TLV first)');
    if (at + 1 >= area.length) break;
    let length = area[at + 1]!;
    let valueAt = at + 2;
    if (length === 0xff) {
      if (at + 3 >= area.length) break;
      length = (area[at + 2]! << 8) | area[at + 3]!;
      valueAt = at + 4;
    }
    if (valueAt + length > area.length) break;
    if (tag === TLV_NDEF) return area.slice(valueAt, valueAt + length);
    at = valueAt + length;
  }
  throw invalid('the tag data ends inside a TLV, or holds no NDEF message', { bytes: area.length });
}

/**
 * What an NFC encoder writes to a Type 2 tag's data area for one URI.
 *
 * @example
 * ndefUriTagData('https://example.com/a'); // 03 12 D1 01 0E 55 04 'example.com/a' FE
 */
export function ndefUriTagData(uri: string): Uint8Array {
  return encodeType2NdefTlv(encodeNdefUriMessage(uri));
}

/**
 * The URI a Type 2 tag's data area holds as its NDEF message's one URI record.
 *
 * @example
 * uriOfTagData(ndefUriTagData('https://example.com/a')); // 'https://example.com/a'
 */
export function uriOfTagData(area: Uint8Array): string {
  return decodeNdefUriMessage(decodeType2NdefTlv(area));
}
