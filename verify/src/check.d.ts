import type { DigitalLink } from './digital-link.js';
import type { ControlPlaneKey } from './keys.js';
import { type LabelProof } from './proof.js';
import { type LinkResult } from './result.js';
import { type VerifiedHead } from './seal-context.js';
export interface SealCheck {
    jobRef: string;
    /** Device statement to tree head; the log consistency link is added once all heads are known. */
    links: LinkResult[];
    /** The seal's tree head, when it verified. */
    head: VerifiedHead | undefined;
}
export declare function checkSeals(proof: LabelProof, keys: readonly ControlPlaneKey[] | null, scanned: DigitalLink | undefined): Promise<SealCheck[]>;
