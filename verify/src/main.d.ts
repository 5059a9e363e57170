import { type VerifyIo } from './verify.js';
export interface Io extends VerifyIo {
    stdout(text: string): void;
    stderr(text: string): void;
}
export declare function nodeIo(): Io;
export declare function main(argv: readonly string[], io?: Io): Promise<number>;
