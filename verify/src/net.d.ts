/**
 * What the verifier asks the network: the resolver's linkset for a Digital Link (RFC 9264), the proof, the
 * signing keys, the latest tree head and consistency proofs. `fetch` is handed in.
 */
import { type DigitalLink } from './digital-link.js';
export type FetchFn = (url: string, init?: {
    headers?: Record<string, string>;
}) => Promise<Response>;
/** GETs JSON; throws an Error saying what went wrong (status, not JSON, network). */
export declare function getJson(fetchFn: FetchFn, url: string, accept?: string): Promise<unknown>;
/** The certificationInfo link of an RFC 9264 linkset, resolved against `base`, or undefined. */
export declare function certificationInfoOf(linkset: unknown, base: string): string | undefined;
/**
 * Where the label's proof is: the resolver's certificationInfo link, or when it offers none (or cannot be
 * asked) the control plane's proof route on the Digital Link's origin.
 */
export declare function findProofUrl(fetchFn: FetchFn, link: DigitalLink): Promise<string>;
/** Fetches the proof; a failure here is an input error (exit 2), not a broken link. */
export declare function fetchProof(fetchFn: FetchFn, url: string): Promise<unknown>;
/** Throws Broken unless `url` is on the trust anchor's origin (the Digital Link's). */
export declare function assertAnchored(url: string, anchor: string, what: string): void;
/** The consistency proof between two sizes: `{ first, second, proof: [hex] }`. */
export declare function fetchConsistencyProof(fetchFn: FetchFn, baseUrl: string, first: number, second: number): Promise<Buffer[]>;
/** The latest tree head's JWS: `{ treeHead: "<JWS>" }`. */
export declare function fetchLatestTreeHead(fetchFn: FetchFn, url: string): Promise<unknown>;
