/** RFC 8785 JSON Canonicalization Scheme. */
export { canonicalJson, canonicalJsonBytes, isCanonicalJsonText } from './canonical-json.js';
