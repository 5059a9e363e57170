export declare const USAGE: string;
export interface Options {
    input: string;
    offline: boolean;
    keys: string | undefined;
    state: string | undefined;
    noState: boolean;
    json: boolean;
    saveProof: string | undefined;
    saveKeys: string | undefined;
    help: boolean;
}
export declare function parseArgs(argv: readonly string[]): Options;
