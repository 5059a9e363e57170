/**
 * A CPU profile of this thread (the control plane's, when it runs in the bench process) taken with the
 * inspector while a load runs, summarised as the share of samples that fall in each named cost: a sample
 * counts toward a cost when any frame of its stack matches it (so shares overlap: idempotency's SQL counts
 * toward both "idempotency" and "SQLite"). `self` is the share no other cost explains.
 */
import { type CpuProfile, type ProfileNode, startProfiling } from './v8-profile.js';

/** A named cost: a frame belongs to it when its URL or function name matches. */
export interface CostMatcher {
  name: string;
  url?: RegExp;
  fn?: RegExp;
  /** The frame's caller's URL: a native frame is told by who called it (`run` is SQLite's and crypto's). */
  calledFrom?: RegExp;
}

/**
 * Layers, exclusive: each sample goes to the innermost frame that matches one (SQLite's native step under
 * Kysely counts as SQLite, not Kysely), so the shares add up to 100 %.
 */
export const LAYERS: CostMatcher[] = [
  { name: 'idle (event loop waiting for I/O)', fn: /^\(idle\)$/ },
  { name: 'garbage collection', fn: /^\(garbage collector\)$/ },
  // node:crypto's one-shot sign and verify run a native `run`, as SQLite's statements do: told apart by caller
  // (before this, a sealed job's signatures counted as SQLite's time).
  {
    name: 'JWS signing and verifying (Ed25519)',
    url: /^$/,
    fn: /^run$/,
    calledFrom: /^node:internal\/crypto\//,
  },
  { name: 'SQLite: executing statements and commits', url: /^$/, fn: /^(run|all|get|iterate|exec)$/ },
  { name: 'SQLite: statement preparation', url: /^$/, fn: /^prepare$/ },
  { name: 'PostgreSQL client (pg, wire protocol)', url: /node_modules\/(pg|pg-protocol|pg-pool)\// },
  {
    name: 'JWS signing and verifying (Ed25519)',
    fn: /^(signVerify|eddsaSignVerify|sign|verify)$/,
    url: /^node:internal\/crypto|^$/,
  },
  { name: 'jose (JWS encoding)', url: /node_modules\/jose\// },
  { name: 'zod validation', url: /node_modules\/zod\// },
  {
    name: 'JSON, canonical JSON (RFC 8785)',
    fn: /^(parse|stringify|canonicalize|canonicalJson|toPlainJson)$/,
  },
  { name: 'Kysely: building and compiling queries', url: /node_modules\/kysely\// },
  {
    name: 'Express and router',
    url: /node_modules\/(express|router|body-parser|raw-body|finalhandler|send|on-finished|type-is|content-type|iconv-lite|path-to-regexp|qs)\//,
  },
  {
    name: 'Node HTTP and sockets (on PostgreSQL also its wire)',
    url: /^node:(_http|net|internal\/(streams|stream_base|http))/,
  },
  { name: 'Node async hooks (AsyncLocalStorage)', url: /^node:(internal\/)?async_hooks/ },
  { name: 'control plane code', url: /control-plane\/src\// },
];

/**
 * Parts of a device request, inclusive: a sample counts toward every part on its stack, so parts overlap
 * and do not add up. A CPU profile loses the caller across an `await`: the statements a part runs after
 * its first await count toward the driver, not the part (the SQL timings say where SQLite's time goes).
 */
export const PARTS: CostMatcher[] = [
  // Middleware calls the next one synchronously, so a middleware's frame would hold the rest of the chain:
  // authentication is matched by what it calls, not by the middleware.
  {
    name: 'authentication (access token verify, device and tenant lookup)',
    fn: /^principalFromAccessToken$/,
  },
  {
    name: 'claim (queue UPDATE, attempt row, envelope)',
    fn: /^(claimJobs|claimJob|claimInTransaction|claimNext)$/,
  },
  { name: 'result checks (job read, evidence checks)', fn: /^checkResult$/ },
  { name: '  of which the evidence bundle (JWS verify, comparisons)', fn: /^checkBundle$/ },
  // One result's transition, or a batch's set-wise writes (BatchWrites.flush).
  {
    name: 'transition writes (guarded UPDATE, evidence, attempt)',
    url: /aidc\/result(-batch)?\.ts$/,
    fn: /^(moveJob|flush)$/,
  },
  {
    name: '  of which the seal (metadata.print, EPCIS, receipt signing)',
    fn: /^(confirmPrinted|sealReceipt)$/,
  },
  { name: 'idempotency record (lookup and insert)', url: /(http\/idempotency|store\/idempotency-keys)/ },
  { name: 'audit rows', url: /\/audit\// },
  { name: 'outbox rows (write) and dispatcher', url: /\/outbox\// },
  { name: 'savepoints and commits', fn: /^(commitTransaction|beginTransaction)$/ },
  { name: 'transparency log sequencer', url: /\/transparency\// },
  { name: 'reply (JSON and socket write)', fn: /^sendReply$/ },
];

export interface CostShare {
  name: string;
  share: number;
}

export class CpuProfiler {
  private stopProfiling: (() => Promise<CpuProfile>) | undefined;

  async start(dialect: 'sqlite' | 'postgres'): Promise<void> {
    this.stopProfiling = await startProfiling(`aidc-${dialect}`);
  }

  async stop(dialect: 'sqlite' | 'postgres'): Promise<{ layers: CostShare[]; parts: CostShare[] }> {
    const profile = await this.stopProfiling!();
    // On PostgreSQL a native frame named `get` or `run` is not SQLite's.
    const layers = dialect === 'sqlite' ? LAYERS : LAYERS.filter((l) => !l.name.startsWith('SQLite'));
    return { layers: summarise(profile, layers, 'innermost'), parts: summarise(profile, PARTS, 'every') };
  }
}

function matches(
  c: CostMatcher,
  frame: ProfileNode['callFrame'],
  caller: ProfileNode['callFrame'] | undefined,
): boolean {
  if (c.calledFrom && !(caller && c.calledFrom.test(caller.url))) return false;
  if (c.url && c.fn) return c.url.test(frame.url) && c.fn.test(frame.functionName);
  if (c.url) return c.url.test(frame.url);
  return c.fn ? c.fn.test(frame.functionName) : false;
}

/**
 * Weighs each sample by its time delta; a share is of all time sampled, idle included. `innermost`: a
 * sample counts for the first cost met walking from the running frame out; `every`: for each cost on its
 * stack.
 */
export function summarise(
  profile: CpuProfile,
  costs: CostMatcher[],
  mode: 'innermost' | 'every',
): CostShare[] {
  const parent = new Map<number, number>();
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const own = (id: number) => {
    const frame = byId.get(id)!.callFrame;
    const up = parent.get(id);
    const caller = up === undefined ? undefined : byId.get(up)!.callFrame;
    return costs.flatMap((c, i) => (matches(c, frame, caller) ? [i] : []));
  };
  // The costs a sample at each node counts toward, memoised per node.
  const memo = new Map<number, number[]>();
  const costsOf = (id: number): number[] => {
    const known = memo.get(id);
    if (known) return known;
    const up = parent.get(id);
    const here = own(id);
    const outer = up === undefined ? [] : costsOf(up);
    const set = mode === 'innermost' ? (here.length ? [here[0]!] : outer) : [...new Set([...here, ...outer])];
    memo.set(id, set);
    return set;
  };
  const totals = costs.map(() => 0);
  let all = 0;
  let unexplained = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    all += dt;
    const set = costsOf(id);
    if (set.length === 0) unexplained += dt;
    for (const c of set) totals[c]! += dt;
  });
  // Matchers of one name (a cost told by two kinds of frame) make one share.
  const byName = new Map<string, number>();
  costs.forEach((c, i) => byName.set(c.name, (byName.get(c.name) ?? 0) + totals[i]!));
  const out = [...byName].map(([name, t]) => ({ name, share: all ? t / all : 0 }));
  if (mode === 'innermost')
    out.push({ name: 'other (Node internals, libraries)', share: all ? unexplained / all : 0 });
  return mode === 'innermost' ? out.sort((a, b) => b.share - a.share) : out;
}
