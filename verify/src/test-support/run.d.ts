import { type Io } from '../main.js';
import type { Report } from '../report.js';
import type { LinkName, LinkResult } from '../result.js';
export interface Run {
    code: number;
    stdout: string;
    stderr: string;
    /** The --json report, when the run printed one. */
    report: Report | undefined;
}
export declare function tempDir(): string;
export declare function run(argv: string[], io: Partial<Io> & Pick<Io, 'fetch'>): Promise<Run>;
/** The results of one link across the report (keys once, the others per seal). */
export declare function linkOf(report: Report | undefined, link: LinkName, seal?: number): LinkResult;
/** The links that are not verified, by name. */
export declare function notVerified(report: Report | undefined): string[];
