/** RFC 8785 JSON Canonicalization Scheme. */
export {
  canonicalJson,
  canonicalJsonBytes,
  isCanonicalJsonText,
  sameCanonicalJson,
} from './canonical-json.js';
