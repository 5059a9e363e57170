/** NFC: the NDEF URI record of a label's NFC tag and the Type 2 tag TLV around it. Pure, no I/O. */
export {
  NDEF_URI_PREFIXES,
  decodeNdefUriMessage,
  decodeType2NdefTlv,
  encodeNdefUriMessage,
  encodeType2NdefTlv,
  ndefUriTagData,
  uriOfTagData,
} from './ndef.js';
