/**
 * Offline resolution of verification methods and the DID helpers the control plane uses to apply its
 * rule "issuer DID equals the verificationMethod DID, method did:key".
 */
import { CodecError } from '../errors/codec-error.js';
import { publicKeyFromDidKey } from '../did/did-key.js';

/** DID syntax (W3C DID Core 1.0 §3.1): `did:` method-name `:` method-specific-id. */
const ID_CHAR = '(?:[A-Za-z0-9._-]|%[0-9A-Fa-f]{2})';
const DID = new RegExp(`^did:[a-z0-9]+:(?:${ID_CHAR}*:)*${ID_CHAR}+$`);

function isDid(value: unknown): value is string {
  return typeof value === 'string' && DID.test(value);
}

/**
 * The issuer of a credential if it is a DID, else undefined (VC Data Model 2.0 §4.7: `issuer` is a URL
 * or an object whose `id` is one). An https issuer, a missing issuer or a DID URL give undefined.
 *
 * @example
 * issuerDid({ issuer: 'did:key:z6Mk...' }); // 'did:key:z6Mk...'
 * issuerDid({ issuer: { id: 'did:key:z6Mk...', name: 'Acme' } }); // 'did:key:z6Mk...'
 * issuerDid({ issuer: 'https://vc.example/issuers/5678' }); // undefined
 */
export function issuerDid(vc: unknown): string | undefined {
  if (typeof vc !== 'object' || vc === null) return undefined;
  const issuer: unknown = (vc as Record<string, unknown>)['issuer'];
  const id: unknown =
    typeof issuer === 'object' && issuer !== null ? (issuer as Record<string, unknown>)['id'] : issuer;
  return isDid(id) ? id : undefined;
}

/**
 * The DID part of a proof's `verificationMethod` (the DID URL without its fragment), or undefined when
 * the proof has no verification method that is a DID URL.
 *
 * @example
 * verificationMethodDid({ verificationMethod: 'did:key:z6MkA#z6MkA' }); // 'did:key:z6MkA'
 */
export function verificationMethodDid(proof: unknown): string | undefined {
  if (typeof proof !== 'object' || proof === null) return undefined;
  const vm: unknown = (proof as Record<string, unknown>)['verificationMethod'];
  if (typeof vm !== 'string') return undefined;
  const did = vm.split('#', 1)[0];
  return isDid(did) ? did : undefined;
}

/**
 * Resolves a did:key verification method id (`did:key:z6Mk...#z6Mk...`) to its raw Ed25519 key, offline.
 * The did:key method defines exactly one such id per DID: the fragment repeats the key. Throws
 * `CodecError` (`UNSUPPORTED_DID_METHOD`, `INVALID_DID`, `UNSUPPORTED_MULTICODEC`).
 *
 * @example
 * resolveDidKeyVerificationMethod('did:key:z6MkrJVn...#z6MkrJVn...'); // Uint8Array(32)
 */
export function resolveDidKeyVerificationMethod(verificationMethod: string): Uint8Array {
  const hash = verificationMethod.indexOf('#');
  const did = hash < 0 ? verificationMethod : verificationMethod.slice(0, hash);
  const key = publicKeyFromDidKey(did);
  if (hash < 0 || verificationMethod.slice(hash + 1) !== did.slice('did:key:'.length)) {
    throw new CodecError('INVALID_DID', `${verificationMethod} is not the verification method of ${did}`);
  }
  return key;
}
