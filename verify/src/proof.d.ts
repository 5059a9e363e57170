import { type Json } from './shape.js';
export interface LabelProof {
    issuer: string;
    label: {
        gtin: string;
        serial: string;
        digitalLink: string;
        status: string;
        voidedAt: string | null;
    };
    seals: Json[];
    links: {
        signingKeys: string;
        treeHead: string;
        consistency: string;
    };
}
export declare function parseProof(doc: unknown): LabelProof;
/** The log's URL: `links.treeHead` without its `/tree-head` suffix (`<origin>/api/v2/public/log`). */
export declare function logUrlOf(proof: LabelProof): string;
