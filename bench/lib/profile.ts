import path from 'node:path';
import { type CpuProfile, type ProfileNode, startProfiling } from './v8-profile.js';

export interface ProfileLine {
  name: string;
  /** Share of the samples taken while the process was busy (idle excluded), 0..1. */
  share: number;
}

export interface ProfileSummary {
  /** Samples in which the process was busy. */
  busySamples: number;
  /** Share of all samples that were idle (waiting on I/O). */
  idleShare: number;
  functions: ProfileLine[];
  categories: ProfileLine[];
}

/**
 * Where a frame's code lives: a package of node_modules, a folder of ours (`control-plane/public`), node's
 * own library, or one of V8's pseudo-frames ((garbage collector), (program)).
 */
function categoryOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node: core';
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/(control-plane|shared|testkit|bench)\/src\/([^/]+)\//.exec(url);
  if (m) return `${m[1]}/${m[2]}`;
  return path.basename(url);
}

function frameName(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  if (url === '') return functionName || '(anonymous)';
  return `${functionName || '(anonymous)'} ${path.basename(url)}:${lineNumber + 1}`;
}

/** Self time per function and per category, from the samples of a profile. */
export function summarise(profile: CpuProfile, top = 10): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const functions = new Map<string, number>();
  const categories = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const id of profile.samples) {
    const n = byId.get(id);
    if (!n) continue;
    if (n.callFrame.functionName === '(idle)') {
      idle += 1;
      continue;
    }
    busy += 1;
    const f = frameName(n);
    functions.set(f, (functions.get(f) ?? 0) + 1);
    const c = categoryOf(n.callFrame.url, n.callFrame.functionName);
    categories.set(c, (categories.get(c) ?? 0) + 1);
  }
  const rank = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => ({ name, share: busy === 0 ? 0 : count / busy }));
  return {
    busySamples: busy,
    idleShare: idle + busy === 0 ? 0 : idle / (idle + busy),
    functions: rank(functions),
    categories: rank(categories),
  };
}

/**
 * Profiles this process (the control plane runs in it) while `work` runs, with V8's sampling profiler
 * through the inspector, and summarises self time; with DPP_BENCH_PROFILE_DIR set, also writes the
 * profile there as `<name>.cpuprofile`. The load generator runs in its own process, so what is
 * sampled is the server's side alone.
 */
export async function profiled<T>(
  name: string,
  work: () => Promise<T>,
): Promise<{ result: T; summary: ProfileSummary }> {
  const stop = await startProfiling(name, 200);
  let result: T;
  try {
    result = await work();
  } catch (err) {
    await stop();
    throw err;
  }
  return { result, summary: summarise(await stop()) };
}

/** A few lines for the bench output: top categories and top functions by self time. */
export function formatSummary(title: string, s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `profile: ${title} (${s.busySamples} busy samples, ${pct(s.idleShare).trim()} idle)`,
    '  self time by category:',
    ...s.categories.map((c) => `    ${pct(c.share)}  ${c.name}`),
    '  self time by function:',
    ...s.functions.map((f) => `    ${pct(f.share)}  ${f.name}`),
  ];
  return lines.join('\n');
}
