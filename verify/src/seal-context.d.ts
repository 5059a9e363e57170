/** What the checks of one seal share: the proof, the keys, the payloads of its JWS (read before verified). */
import type { DigitalLink } from './digital-link.js';
import type { ControlPlaneKey } from './keys.js';
import type { LabelProof } from './proof.js';
import { type Json } from './shape.js';
import type { DeviceStatement } from './check-device.js';
export interface VerifiedHead {
    log: string;
    treeSize: number;
    rootHash: string;
    timestamp: string;
    treeHead: string;
}
export declare class SealContext {
    readonly proof: LabelProof;
    readonly seal: Json;
    readonly index: number;
    private readonly keys;
    readonly logUrl: string;
    private readonly scanned;
    /** Unverified payloads, to compare one link with the next; each link verifies its own. */
    readonly bundle: Json;
    readonly receipt: Json;
    /** Set once the device statement verified. */
    statement: DeviceStatement | undefined;
    /** Set once the seal's tree head verified. */
    head: VerifiedHead | undefined;
    constructor(proof: LabelProof, seal: Json, index: number, keys: readonly ControlPlaneKey[] | null, logUrl: string, scanned: DigitalLink | undefined);
    requireKeys(): readonly ControlPlaneKey[];
    assertIssuer(payload: Json, what: string): void;
    /** The label the verifier was handed (a scanned QR, a typed link) is the label of the proof. */
    assertScannedLink(): void;
    /** Where this label's proof is served: what the EPCIS event's certificationInfo must name. */
    proofUrl(): string;
}
