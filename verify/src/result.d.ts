/** The links, in the order the doc checks them. */
export declare const LINKS: readonly ["keys", "device statement", "evidence bundle", "passport version", "seal receipt", "EPCIS event", "log entry", "tree head", "log consistency"];
export type LinkName = (typeof LINKS)[number];
export type LinkStatus = 'verified' | 'broken' | 'pending';
export interface LinkResult {
    link: LinkName;
    status: LinkStatus;
    /** What was verified (a short human sentence), or why it is broken or pending. */
    detail: string;
}
/** A link that cannot be judged yet: the log has not taken the seal in. */
export declare class Pending extends Error {
    readonly name = "Pending";
}
/**
 * Runs the check of one link: its sentence when it verifies, broken with the reason when it throws Broken
 * (or anything else: an unexpected error never reads as verified), pending when it throws Pending.
 */
export declare function judge(link: LinkName, check: () => Promise<string> | string): Promise<LinkResult>;
export declare function verified(link: LinkName, detail: string): LinkResult;
export declare function broken(link: LinkName, detail: string): LinkResult;
