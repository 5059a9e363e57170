/** RFC 8785 JSON Canonicalization Scheme. */
export { canonicalJson, canonicalJsonBytes } from './canonical-json.js';
