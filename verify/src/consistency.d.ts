import { type LinkResult, type LinkStatus } from './result.js';
import type { VerifiedHead } from './seal-context.js';
import type { RememberedHead } from './state.js';
/** The log, online: its latest head and consistency proofs between two sizes. */
export interface LogSource {
    /** The latest head, verified (signature, window, issuer, log URL). */
    latestHead(): Promise<VerifiedHead>;
    /** The consistency proof from `first` to `second` leaves, as hashes. */
    consistencyProof(first: number, second: number): Promise<Buffer[]>;
}
export interface SealHead {
    /** The status of the seal's tree head link. */
    headStatus: LinkStatus;
    head: VerifiedHead | undefined;
}
/** Offline: each seal's head against the remembered heads of the same size. */
export declare function checkOffline(seals: readonly SealHead[], remembered: readonly RememberedHead[]): LinkResult[];
/**
 * Online: the latest head verifies, and every remembered head and each seal's head is consistent with it.
 * Returns one result per seal and the latest head (to remember) when it verified.
 */
export declare function checkOnline(seals: readonly SealHead[], remembered: readonly RememberedHead[], source: LogSource): Promise<{
    results: LinkResult[];
    latest: VerifiedHead | undefined;
}>;
