/**
 * A CPU profile of this process (the V8 sampling profiler through `node:inspector`), summarised by who spent
 * the time: each sample's self time goes to the nearest frame of our own code on its stack (package and
 * folder, e.g. `agent/render`, `control-plane/aidc`, `firmware-sim/render`), with the library it was in
 * when that is not ours (`jose`, `better-sqlite3`, `jsqr`...). Idle time and the garbage collector are
 * their own rows.
 */
import { type CpuProfile, startProfiling } from './v8-profile.js';

export interface ProfileRow {
  who: string;
  ms: number;
}

export async function startCpuProfile(): Promise<() => Promise<{ totalMs: number; rows: ProfileRow[] }>> {
  const stop = await startProfiling('agent');
  return async () => summarise(await stop());
}

const OURS = /\/(agent|control-plane|firmware-sim|shared)\/src\/([^/]+)/;
const LIB = /node_modules\/((?:@[^/]+\/)?[^/]+)/;

function summarise(p: CpuProfile): { totalMs: number; rows: ProfileRow[] } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = new Map<number, string>();
  const whoOf = (id: number): string => {
    const known = label.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    const fn = node.callFrame.functionName;
    let who: string;
    if (fn === '(idle)' || fn === '(program)' || fn === '(garbage collector)') who = fn;
    else {
      const lib = LIB.exec(node.callFrame.url)?.[1] ?? null;
      let owner: string | null = null;
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const m = OURS.exec(byId.get(at)!.callFrame.url);
        if (m) {
          owner = `${m[1]}/${m[2]!.replace(/\.ts$/, '')}`;
          break;
        }
      }
      who = `${owner ?? '(other)'}${lib ? ` in ${lib}` : ''}`;
    }
    label.set(id, who);
    return who;
  };
  const ms = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const who = whoOf(p.samples[i]!);
    ms.set(who, (ms.get(who) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  }
  const rows = [...ms].map(([who, t]) => ({ who, ms: t })).sort((a, b) => b.ms - a.ms);
  return { totalMs: (p.endTime - p.startTime) / 1000, rows };
}
