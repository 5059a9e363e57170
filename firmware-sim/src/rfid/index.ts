export { EPC_WORDS_MAX, Gen2Tag, type MemoryBank } from './tag.js';
export { RfidEncoder, epcWriteOf, type RfidField, type EncodeResult } from './encoder.js';
export { crc16Gen2 } from './crc16.js';
