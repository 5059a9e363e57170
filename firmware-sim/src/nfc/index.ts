export { Type2Tag, TYPE2_FIRST_DATA_PAGE, TYPE2_PAGE_BYTES } from './type2-tag.js';
export { NfcEncoder, nfcUriOf, type NfcField, type NfcEncodeResult } from './encoder.js';
