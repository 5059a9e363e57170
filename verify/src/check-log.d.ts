import { type ControlPlaneKey } from './keys.js';
import type { SealContext, VerifiedHead } from './seal-context.js';
/** Link 7: the receipt's leaf hash and the inclusion proof lead to the tree head's root (RFC 9162 §2.1.3.2). */
export declare function checkLogEntry(ctx: SealContext): string;
/**
 * A signed tree head of this proof's log: typ dpp-tree-head+jws, signed by the control plane inside its
 * key's window, issued by the proof's issuer, naming this log. Throws Broken.
 */
export declare function readTreeHead(jws: unknown, expected: {
    keys: readonly ControlPlaneKey[] | null;
    issuer: string;
    logUrl: string;
}): Promise<{
    head: VerifiedHead;
    kid: string;
}>;
/** Link 8: the seal's tree head, signed by the control plane for this proof's log. */
export declare function checkTreeHead(ctx: SealContext): Promise<string>;
