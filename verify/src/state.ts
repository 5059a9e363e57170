/**
 * The tree heads this verifier has seen, per log URL, kept in a small JSON file so the next run can ask the
 * log to prove it only grew since (label-proof.md, "The log"). Default place:
 * `$XDG_STATE_HOME/dpp-verify/tree-heads.json`, else `~/.local/state/dpp-verify/tree-heads.json`.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { VerifyError } from './errors.js';
import { isObject } from './shape.js';
import type { VerifiedHead } from './seal-context.js';

export type RememberedHead = Omit<VerifiedHead, 'log'>;

export interface TreeHeadState {
  version: 1;
  logs: Record<string, RememberedHead[]>;
}

/** Heads kept per log: the newest ones; consistency is transitive, so older ones add little. */
const KEEP = 50;

export function defaultStatePath(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const base = env.XDG_STATE_HOME ? env.XDG_STATE_HOME : join(home, '.local', 'state');
  return join(base, 'dpp-verify', 'tree-heads.json');
}

function isHead(v: unknown): v is RememberedHead {
  return (
    isObject(v) &&
    Number.isSafeInteger(v.treeSize) &&
    typeof v.rootHash === 'string' &&
    /^[0-9a-f]{64}$/.test(v.rootHash) &&
    typeof v.timestamp === 'string' &&
    typeof v.treeHead === 'string'
  );
}

export async function loadState(path: string): Promise<TreeHeadState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, logs: {} };
    throw new VerifyError('INPUT_UNREADABLE', `cannot read the state file ${path}`, { cause: e });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new VerifyError('INPUT_UNREADABLE', `the state file ${path} is not JSON`, { cause: e });
  }
  if (!isObject(doc) || doc.version !== 1 || !isObject(doc.logs)) {
    throw new VerifyError('INPUT_UNREADABLE', `the state file ${path} is not a dpp-verify state file`);
  }
  const logs: Record<string, RememberedHead[]> = {};
  for (const [log, heads] of Object.entries(doc.logs)) {
    if (!Array.isArray(heads) || !heads.every(isHead)) {
      throw new VerifyError('INPUT_UNREADABLE', `the state file ${path} has a malformed head of ${log}`);
    }
    logs[log] = heads;
  }
  return { version: 1, logs };
}

export function rememberedHeads(state: TreeHeadState, log: string): RememberedHead[] {
  return state.logs[log] ?? [];
}

/** Adds a verified head (once), keeping the newest heads of its log. */
export function remember(state: TreeHeadState, head: VerifiedHead): void {
  const { log, ...kept } = head;
  const heads = rememberedHeads(state, log).filter(
    (h) => !(h.treeSize === kept.treeSize && h.rootHash === kept.rootHash),
  );
  heads.push(kept);
  heads.sort((a, b) => a.treeSize - b.treeSize);
  state.logs[log] = heads.slice(-KEEP);
}

/** Writes the state atomically (a temporary file renamed over the old one). */
export async function saveState(path: string, state: TreeHeadState): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(tmp, path);
}
