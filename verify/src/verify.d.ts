import type { Options } from './args.js';
import { type InputIo } from './input.js';
import { type Report } from './report.js';
export interface VerifyIo extends InputIo {
    env: Readonly<Record<string, string | undefined>>;
    homedir: string;
    /** Warnings that do not change the verdict (the state file could not be written). */
    warn(message: string): void;
}
export declare function runVerify(opts: Options, io: VerifyIo): Promise<Report>;
