import type { VerifiedHead } from './seal-context.js';
export type RememberedHead = Omit<VerifiedHead, 'log'>;
export interface TreeHeadState {
    version: 1;
    logs: Record<string, RememberedHead[]>;
}
export declare function defaultStatePath(env: Readonly<Record<string, string | undefined>>, home: string): string;
export declare function loadState(path: string): Promise<TreeHeadState>;
export declare function rememberedHeads(state: TreeHeadState, log: string): RememberedHead[];
/** Adds a verified head (once), keeping the newest heads of its log. */
export declare function remember(state: TreeHeadState, head: VerifiedHead): void;
/** Writes the state atomically (a temporary file renamed over the old one). */
export declare function saveState(path: string, state: TreeHeadState): Promise<void>;
