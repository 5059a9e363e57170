/** GS1 identifiers: GTIN, AI (21) serial, GS1 Digital Link URIs. */
export { GTIN_LENGTHS, computeGs1CheckDigit, isValidGtin, normalizeGtin } from './gtin.js';
export { GS1_SERIAL_MAX_LENGTH, assertGs1Serial, isValidGs1Serial } from './serial.js';
export { decodeDigitalLinkValue, encodeDigitalLinkValue } from './percent-encoding.js';
export {
  buildDigitalLink,
  digitalLinkPath,
  parseDigitalLink,
  parseDigitalLinkPath,
  type DigitalLinkKey,
  type ParsedDigitalLink,
} from './digital-link.js';
export {
  GS1_GROUP_SEPARATOR,
  gs1AiLength,
  gs1ElementsFromHri,
  gs1ElementsFromRaw,
  gs1ElementsToHri,
  gs1ElementsToRaw,
  gs1HriToRaw,
  gs1PredefinedValueLength,
  gs1RawToHri,
  type Gs1Element,
} from './element-string.js';
