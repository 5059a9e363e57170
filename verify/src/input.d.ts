import { type DigitalLink } from './digital-link.js';
import { type FetchFn } from './net.js';
export interface Obtained {
    proofDoc: unknown;
    proofUrl: string | undefined;
    /** The Digital Link the verifier was handed or decoded; absent for a proof file. */
    link: DigitalLink | undefined;
}
export interface InputIo {
    fetch: FetchFn;
    rasterisePdf(pdf: Buffer): Promise<Buffer | null>;
}
export declare function readInputFile(path: string, what: string): Promise<Buffer>;
export declare function parseJsonFile(bytes: Buffer, path: string): unknown;
export declare function obtainProof(input: string, offline: boolean, io: InputIo): Promise<Obtained>;
