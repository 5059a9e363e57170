import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { startTestControlPlane } from '@dpp/testkit';
import { enrollLoadDevices, percentile, queuePrintJobs, runLoad } from './lib/aidc-floor.js';
const dialect = (process.argv[2] ?? 'sqlite') as 'sqlite';
const t = await startTestControlPlane({ dialect, env: { RATE_LIMITS: 'mid_market=1000000000/60' } });
const admin = t.tenants.a.admin;
const JOBS = Number(process.env.JOBS ?? 4000);
await queuePrintJobs(t.call, admin, JOBS);
const devices = await enrollLoadDevices(t, admin, 50, 4);
const pauses: { kind: number; ms: number }[] = [];
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) pauses.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration });
});
obs.observe({ entryTypes: ['gc'] });
const h = monitorEventLoopDelay({ resolution: 5 });
h.enable();
const out = await runLoad({ urls: [t.url], devices, protocol: 'batch', printers: 4 });
h.disable();
obs.disconnect();
const claims = out.claimMs.sort((a, b) => a - b);
console.log(`sealed ${out.sealed} in ${out.seconds.toFixed(1)} s: ${(out.sealed / out.seconds).toFixed(0)}/s; claims p50 ${percentile(claims, 0.5).toFixed(1)} p99 ${percentile(claims, 0.99).toFixed(1)}`);
console.log(`event loop delay p50 ${(h.percentile(50) / 1e6).toFixed(1)} p99 ${(h.percentile(99) / 1e6).toFixed(1)} max ${(h.max / 1e6).toFixed(1)}`);
for (const kind of [1, 2, 4, 8]) {
  const p = pauses.filter((x) => x.kind === kind).map((x) => x.ms).sort((a, b) => a - b);
  if (p.length === 0) continue;
  const sum = p.reduce((a, b) => a + b, 0);
  console.log(`gc kind ${kind}: ${p.length} pauses, total ${sum.toFixed(0)} ms, p50 ${p[Math.floor(p.length / 2)]!.toFixed(1)} max ${p[p.length - 1]!.toFixed(1)}; >20ms: ${p.filter((x) => x > 20).length}`);
}
await t.close();
process.exit(0);
