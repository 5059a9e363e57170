/** EPC identifiers: the SGTIN-96 binary codec and SGTIN URIs (GS1 EPC Tag Data Standard). */
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
export { parseSgtinPureIdentityUri, sgtinPureIdentityUri, type SgtinIdentity } from './sgtin-uri.js';
