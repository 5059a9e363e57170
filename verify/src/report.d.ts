/** The verifier's answer: one line per link, a summary, the exit code; or the same as JSON. */
import { type LinkResult } from './result.js';
export interface SealReport {
    jobRef: string;
    links: LinkResult[];
}
export interface Report {
    /** What was checked: the Digital Link, the proof URL or file. */
    input: string;
    digitalLink: string | undefined;
    proofUrl: string | undefined;
    label: {
        gtin: string;
        serial: string;
        digitalLink: string;
        status: string;
        voidedAt: string | null;
    };
    keys: LinkResult;
    seals: SealReport[];
    ok: boolean;
    /** 0: every link of every seal verified; 1: a link is broken or pending. */
    exitCode: 0 | 1;
}
export declare function buildReport(r: Omit<Report, 'ok' | 'exitCode'>): Report;
export declare function formatReport(r: Report): string;
