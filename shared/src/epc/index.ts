/** EPC identifiers: the SGTIN-96 and SGTIN-198 binary codecs and SGTIN URIs (GS1 EPC Tag Data Standard). */
export {
  SGTIN96_HEADER,
  SGTIN96_MAX_SERIAL,
  SGTIN_FILTER,
  decodeSgtin96,
  decodeSgtin96TagUri,
  encodeSgtin96,
  isSgtin96SafeSerial,
  type Sgtin96,
  type Sgtin96Input,
} from './sgtin96.js';
export { SGTIN_PARTITIONS, type SgtinPartition } from './partition.js';
export {
  escapeGs3a3,
  parseSgtinPureIdentityUri,
  sgtinPureIdentityUri,
  unescapeGs3a3,
  type SgtinIdentity,
} from './sgtin-uri.js';
export {
  SGTIN198_HEADER,
  SGTIN198_HEX_LENGTH,
  decodeSgtin198,
  decodeSgtin198TagUri,
  encodeSgtin198,
  type Sgtin198,
  type Sgtin198Input,
} from './sgtin198.js';
export {
  EPC_SCHEME_PREFERENCES,
  decodeLabelEpc,
  encodeLabelEpc,
  epcSchemeFor,
  type DecodedLabelEpc,
  type EpcSchemePreference,
  type LabelEpcInput,
} from './label-epc.js';
