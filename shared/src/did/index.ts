/** did:key for Ed25519, with base58btc and multibase helpers. */
export {
  base58btcDecode,
  base58btcEncode,
  multibaseBase58btcDecode,
  multibaseBase58btcEncode,
} from './base58btc.js';
export {
  didKeyFromPublicKey,
  ed25519PublicKeyFromMultibase,
  ed25519PublicKeyMultibase,
  publicKeyFromDidKey,
  verificationMethodId,
} from './did-key.js';
