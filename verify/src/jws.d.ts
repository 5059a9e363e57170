import { type Json } from './shape.js';
export declare const TYP: {
    readonly evidence: "dpp-evidence+jws";
    readonly deviceStatement: "dpp-device-statement+jws";
    readonly sealReceipt: "dpp-seal-receipt+jws";
    readonly treeHead: "dpp-tree-head+jws";
};
/** An Ed25519 public key as a JWK (RFC 8037). */
export interface Ed25519Jwk {
    kty: 'OKP';
    crv: 'Ed25519';
    x: string;
}
/** The payload of a compact JWS, parsed but NOT verified: for comparing one link with the next. */
export declare function peekPayload(jws: unknown): Json | null;
/** The `kid` of a compact JWS's protected header (unverified). */
export declare function headerKid(jws: string): string;
/**
 * Verifies a compact JWS of type `typ` with the key `keyFor(kid)` returns, and returns its payload. Throws a
 * Broken saying what is wrong: another typ or alg, an unknown kid, a bad signature, a payload that is not
 * canonical JSON.
 */
export declare function verifyJws(jws: unknown, typ: string, keyFor: (kid: string) => Ed25519Jwk | undefined): Promise<{
    payload: Json;
    kid: string;
}>;
