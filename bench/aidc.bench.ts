import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import mqtt, { type MqttClient } from 'mqtt';
import { type ApiCaller, httpCaller } from '@dpp/control-plane';
import { RFID_PRINTER_MECHANICS, mechanicalLimit } from '@dpp/firmware-sim';
import { deviceTopics } from '@dpp/shared';
import {
  type DialectName,
  enrollTestDevice,
  printableProduct,
  startTestControlPlane,
  type TestControlPlane,
  testDialects,
} from '@dpp/testkit';
import { enrollLoadDevices, percentile, queuePrintJobs, runLoad } from './lib/aidc-floor.js';
import {
  cpuSecondsOf,
  cpuSecondsOfName,
  startControlPlaneProcess,
  type ControlPlaneProcess,
} from './lib/child-process.js';
import { type Allocation, AllocationMeter } from './lib/allocation.js';
import { CpuProfiler, type CostShare } from './lib/cost-profile.js';
import { analyzeSchema } from './lib/pg-analyze.js';
import { pgBossRate } from './lib/pg-boss-peer.js';
import { ClaimTimeline, type StartBurst } from './lib/claim-timeline.js';
import { PgStatementCounter, SqlTimer, type SqlShare } from './lib/sql-timing.js';
import type { LoadDevice, LoadInput, LoadOutput } from './lib/print-load.js';
import type { BenchRow } from './lib/table.js';

const JOBS = 4000;
/**
 * Jobs of the profiled floor run before the measured one: the profiler and the statement timer cost the thread a
 * few per cent, so the figures come from a floor without them (which also finds the code already compiled, as a
 * control plane that has served before does).
 */
const PROFILED_JOBS = 2000;
/** Jobs for the reference run with one request per result (the protocol before batches). */
const SINGLE_JOBS = 400;
const DEVICES = 50;
/**
 * On PostgreSQL each floor is measured on tables that already hold a floor of this many jobs, with statistics
 * taken after it (pg-analyze.ts), as a floor that has run a minute has them; that first floor, on fresh tables, is
 * printed beside. From empty tables PostgreSQL plans the print loop's kept statements for tables of a few rows (a
 * scan of every evidence row, attempt and version of the workspace) and keeps those plans while the tables grow:
 * 1.58-1.72 ms of its CPU a sealed job against 0.77-0.83 ms on tables with a floor's history (round 20).
 */
const HISTORY_JOBS = 4000;
/** Printers per device: each batch claim takes one job for each. */
const PRINTERS = 4;
/** The paced floor: each device drives one RFID printer at its mechanical limit (firmware-sim's model). */
const PACED_LABELS_PER_SECOND = mechanicalLimit(RFID_PRINTER_MECHANICS);
const PACED_JOBS = DEVICES * 20;
const NOTICE_DEVICES = 1000;
const NOTICES = 10;
/** The external broker of the replica run (the machine's Mosquitto). */
const MQTT_URL = process.env.TEST_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
/** `BENCH_AIDC_SOAK=100000 npm run bench -- aidc`: the opt-in memory soak, jobs in all. */
const SOAK_JOBS = Number(process.env.BENCH_AIDC_SOAK ?? 0);
const SOAK_WAVE = 10_000;

const load = () => loadavg()[0]!.toFixed(2);
/**
 * The control planes' PostgreSQL pools: `DATABASE_POOL_SIZE` when the benchmark is started with it, otherwise
 * twice this machine's cores, as docs/configuration.md advises for a database on the same cores (this
 * benchmark's PostgreSQL is TEST_DATABASE_URL, the machine's own). docs/benchmarks.md, "The pool's size",
 * has both figures.
 */
const POOL_SIZE = process.env.DATABASE_POOL_SIZE || String(2 * availableParallelism());

interface FloorRun {
  perSecond: number;
  claimMs: number[];
  /** Of `claimMs`, each device's first claim (all sent at once at the start). */
  firstClaimMs: number[];
  resultMs: number[];
  /** On PostgreSQL: the cores its backends used while the floor ran (this machine's, beside this process's). */
  postgresCores?: number;
  profile?: { layers: CostShare[]; parts: CostShare[] };
  /** SQLite's time by what the statements are for, and the jobs it was spent on. */
  sql?: { shares: SqlShare[]; jobs: number; commitMs: number[] };
  /** PostgreSQL's statements (round trips) by what they are for, and the jobs they were spent on. */
  pgStatements?: {
    shares: { name: string; statements: number }[];
    jobs: number;
    planning: Awaited<ReturnType<PgStatementCounter['planning']>>;
    /** Statements sent under a name (kept by their connection). */
    named: number;
  };
  /** The claim calls' time inside the control plane (its request-duration histogram): shares within 10 and 50 ms. */
  inside?: { within10: number; within50: number };
  /** Tree heads the transparency log signed while the floor ran (its sequencer's passes that took receipts in). */
  treeHeads?: number;
  /** The share of the run each event loop was busy: the control plane's (this thread) and the devices' worker. */
  busy?: { controlPlane: number; devices: number };
  /** Cores this process used meanwhile: the control plane's thread, the devices', the rest (Linux only). */
  cores?: LoadOutput['cores'];
  /** The devices' first claims as the control plane's server read and answered them. */
  burst?: StartBurst;
  /** On PostgreSQL: the floor run first on fresh tables, whose history the measured floor runs on. */
  history?: History;
  /**
   * What the control plane's thread allocated a sealed job while the floor ran, its garbage collections, and
   * the share of the run their pauses took.
   */
  allocation?: Omit<Allocation, 'bytes' | 'pauseMs'> & { bytesPerJob: number; pauseShare: number };
}

/** A floor of HISTORY_JOBS on fresh tables: its rate, and PostgreSQL's CPU a sealed job. */
interface History {
  perSecond: number;
  postgresMsPerJob: number;
}

/**
 * The history a PostgreSQL floor is measured on: HISTORY_JOBS jobs queued and sealed by `devices` (just enrolled,
 * batch calls, 4 printers each), then every table of the schema analysed; the devices' tokens are renewed after it.
 */
async function floorHistory(
  call: ApiCaller,
  key: string,
  urls: string[],
  databaseUrl: string,
  devices: LoadDevice[] & { refresh(): Promise<void> },
): Promise<History> {
  await queuePrintJobs(call, key, HISTORY_JOBS);
  let before = 0;
  const out = await runLoad({ urls, devices, protocol: 'batch', printers: PRINTERS }, () => {
    before = cpuSecondsOfName('postgres');
  });
  const postgresSeconds = cpuSecondsOfName('postgres') - before;
  if (out.sealed !== HISTORY_JOBS) throw new Error(`history: sealed ${out.sealed} of ${HISTORY_JOBS}`);
  await analyzeSchema(databaseUrl);
  await devices.refresh();
  return { perSecond: out.sealed / out.seconds, postgresMsPerJob: (postgresSeconds / out.sealed) * 1000 };
}

const CLAIM_ROUTES = new Set(['/api/v2/aidc/jobs/claim', '/api/v2/aidc/jobs/claims']);

/**
 * Claim calls by upper bound of their time inside the control plane (dpp_http_request_duration_seconds:
 * from the request read to the answer sent), from its metrics registry.
 */
async function claimDurations(t: TestControlPlane): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const v of (await t.cp.built.metrics.httpDuration.get()).values) {
    if (!v.metricName?.endsWith('_bucket') || !CLAIM_ROUTES.has(String(v.labels.route))) continue;
    const bound = (v.labels as { le?: string | number }).le;
    const le = bound === '+Inf' ? Infinity : Number(bound);
    out.set(le, (out.get(le) ?? 0) + v.value);
  }
  return out;
}

function insideShares(before: Map<number, number>, after: Map<number, number>): FloorRun['inside'] {
  const calls = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const all = calls(Infinity);
  return all === 0 ? undefined : { within10: calls(0.01) / all, within50: calls(0.05) / all };
}

/** Tree heads the control plane's transparency log has signed. */
async function treeHeads(t: TestControlPlane): Promise<number> {
  const row = await t.cp.store.db
    .selectFrom('log_tree_heads')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** What a claim's latency is made of: its time inside the control plane, the rest waiting to be read. */
function printInside(floor: string, run: FloorRun): void {
  if (!run.inside) return;
  const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
  console.log(
    `  ${floor}: claim calls answered within 10 ms of being read ${pct(run.inside.within10)}, ` +
      `within 50 ms ${pct(run.inside.within50)} (the rest of a claim's latency is the wait to be read)`,
  );
  if (run.busy)
    console.log(
      `  ${floor}: event loops busy: control plane ${pct(run.busy.controlPlane)}, devices' thread ` +
        `${pct(run.busy.devices)} (a devices' thread near 100 % drives no harder: the floor is then the bench's limit)`,
    );
  if (run.cores) {
    const { main, devices, rest } = run.cores;
    console.log(
      `  ${floor}: cores this process used: control plane's thread ${main.toFixed(2)}, devices' thread ` +
        `${devices.toFixed(2)}, its other threads ${rest.toFixed(2)} (V8's garbage collection and compiler helpers, ` +
        `libuv's pool), ${(main + devices + rest).toFixed(2)} of the machine's ${availableParallelism()}`,
    );
  }
  if (run.allocation) {
    const a = run.allocation;
    console.log(
      `  ${floor}: the control plane's thread allocated ${(a.bytesPerJob / 1024).toFixed(0)} KB a sealed job ` +
        `(V8's record of its collections: ${a.scavenges} scavenges, ${a.fullCollections} full, pauses ` +
        `${(a.pauseShare * 100).toFixed(1)} % of the run)`,
    );
  }
  if (run.postgresCores !== undefined)
    console.log(
      `  ${floor}: PostgreSQL's backends used ${run.postgresCores.toFixed(2)} of a core, ` +
        `${((run.postgresCores / run.perSecond) * 1000).toFixed(2)} ms of its CPU a sealed job`,
    );
  printHistory(floor, run.history);
}

/** The floor a PostgreSQL floor's tables hold, as it ran on fresh tables. */
function printHistory(floor: string, history: History | undefined): void {
  if (!history) return;
  console.log(
    `  ${floor}: measured on tables holding a floor of ${HISTORY_JOBS} jobs, analysed after it; that floor, on ` +
      `fresh tables: ${history.perSecond.toFixed(0)} jobs/s, PostgreSQL ${history.postgresMsPerJob.toFixed(2)} ms ` +
      'of CPU a sealed job',
  );
}

/**
 * Devices claim and drive jobs to SEALED over HTTP until the queue is empty, against a control plane in
 * this process (so the inspector can profile it; the devices run in a worker thread).
 */
async function inProcess(
  dialect: DialectName,
  protocol: LoadInput['protocol'],
  jobs: number,
  profile: boolean,
  floor: Pick<LoadInput, 'printers' | 'printerLabelsPerSecond'> = { printers: PRINTERS },
): Promise<FloorRun> {
  const t = await startTestControlPlane({
    dialect,
    env: { RATE_LIMITS: 'mid_market=1000000000/60', DATABASE_POOL_SIZE: POOL_SIZE },
  });
  try {
    const admin = t.tenants.a.admin;
    // On PostgreSQL, devices bound to 4 printers drive the history first (a paced floor's claim for one of them).
    const devices = await enrollLoadDevices(
      t,
      admin,
      DEVICES,
      dialect === 'postgres' ? PRINTERS : floor.printers,
    );
    const history =
      dialect === 'postgres'
        ? await floorHistory(t.call, admin, [t.url], t.databaseUrl!, devices)
        : undefined;
    await queuePrintJobs(t.call, admin, jobs);
    const profiler = profile ? new CpuProfiler() : null;
    const sqlTimer = profile && dialect === 'sqlite' ? new SqlTimer() : null;
    const pgCounter = profile && dialect === 'postgres' ? new PgStatementCounter() : null;
    let claimsBefore = new Map<number, number>();
    let headsBefore = 0;
    let loopBefore = performance.eventLoopUtilization();
    let postgresBefore = 0;
    const timeline = new ClaimTimeline(t.cp.server);
    const meter = new AllocationMeter();
    // Measured from the first claim: the worker's start is no part of the floor.
    const out = await runLoad({ urls: [t.url], devices, protocol, ...floor }, async () => {
      await profiler?.start(dialect);
      sqlTimer?.start();
      pgCounter?.start();
      claimsBefore = await claimDurations(t);
      headsBefore = await treeHeads(t);
      loopBefore = performance.eventLoopUtilization();
      postgresBefore = dialect === 'postgres' ? cpuSecondsOfName('postgres') : 0;
      timeline.start();
      meter.start();
    });
    const { bytes, pauseMs, ...collections } = meter.stop();
    const burst = timeline.stop(devices.length);
    const controlPlaneBusy = performance.eventLoopUtilization(loopBefore).utilization;
    const postgresCores =
      dialect === 'postgres' ? (cpuSecondsOfName('postgres') - postgresBefore) / out.seconds : undefined;
    const inside = insideShares(claimsBefore, await claimDurations(t));
    const heads = (await treeHeads(t)) - headsBefore;
    const sql = sqlTimer?.stop();
    const pgStatements = pgCounter?.stop();
    const planning = pgCounter ? await pgCounter.planning(4) : [];
    const summary = await profiler?.stop(dialect);
    if (out.sealed !== jobs) throw new Error(`sealed ${out.sealed} of ${jobs}`);
    return {
      perSecond: out.sealed / out.seconds,
      claimMs: out.claimMs.sort((a, b) => a - b),
      firstClaimMs: out.firstClaimMs.sort((a, b) => a - b),
      resultMs: out.resultMs.sort((a, b) => a - b),
      ...(postgresCores === undefined ? {} : { postgresCores }),
      treeHeads: heads,
      busy: { controlPlane: controlPlaneBusy, devices: out.busy },
      ...(out.cores ? { cores: out.cores } : {}),
      ...(summary ? { profile: summary } : {}),
      ...(sql && sqlTimer ? { sql: { shares: sql, jobs, commitMs: sqlTimer.commitDurations() } } : {}),
      ...(pgStatements
        ? { pgStatements: { shares: pgStatements, jobs, planning, named: pgCounter!.namedStatements() } }
        : {}),
      ...(inside ? { inside } : {}),
      ...(burst ? { burst } : {}),
      ...(history ? { history } : {}),
      allocation: {
        ...collections,
        bytesPerJob: bytes / out.sealed,
        pauseShare: pauseMs / 1000 / out.seconds,
      },
    };
  } finally {
    await t.close();
  }
}

function printProfile(dialect: string, run: FloorRun): void {
  const p = run.profile!;
  const pct = (c: CostShare) => `${(c.share * 100).toFixed(1).padStart(5)} %  ${c.name}`;
  console.log(
    `\nWhere the control plane's time goes (${dialect}, batched devices; CPU profile of its thread, in a run of ` +
      `${PROFILED_JOBS} jobs before the measured one: ${run.perSecond.toFixed(0)} jobs/s with the profiler on):`,
  );
  console.log('  by layer (exclusive, adds up to 100 %):');
  for (const c of p.layers) if (c.share >= 0.005) console.log(`    ${pct(c)}`);
  console.log('  by part of the request (inclusive: a part counts the SQL it runs; parts overlap):');
  for (const c of p.parts) console.log(`    ${pct(c)}`);
  if (run.pgStatements) {
    const { shares, jobs } = run.pgStatements;
    const all = shares.reduce((n, s) => n + s.statements, 0);
    const named = all > 0 ? (run.pgStatements.named / all) * 100 : 0;
    console.log(
      `  PostgreSQL statements (round trips) per sealed job, by what they are for (${(all / jobs).toFixed(1)} in all, ` +
        `${named.toFixed(0)} % of them sent as named statements, kept by their connection):`,
    );
    for (const s of shares) console.log(`    ${(s.statements / jobs).toFixed(2).padStart(6)}  ${s.name}`);
    console.log(
      "  PostgreSQL's planning of the largest statement of the most frequent groups when it is not kept (EXPLAIN " +
        '(SUMMARY) of its text after the floor; a text sent three times is kept as a named statement, and planned ' +
        'once while PostgreSQL keeps a generic plan for it):',
    );
    for (const p of run.pgStatements.planning)
      console.log(
        `    ${p.planningMs.toFixed(2).padStart(6)} ms  ${p.name} (${p.params} parameters, ${p.chars} characters)`,
      );
  }
  if (!run.sql) return;
  const total = run.sql.shares.reduce((n, s) => n + s.ms, 0);
  const per = (ms: number) => `${((ms / run.sql!.jobs) * 1000).toFixed(0).padStart(5)} µs`;
  console.log(`  SQLite per sealed job, by what the statements are for (${per(total).trim()} in all):`);
  for (const s of run.sql.shares) {
    const n = (s.statements / run.sql.jobs).toFixed(1);
    console.log(`    ${per(s.ms)}  ${n.padStart(5)} statements  ${s.name}`);
  }
  const commits = run.sql.commitMs;
  console.log(
    `  SQLite commits: ${commits.length}, p50 ${percentile(commits, 50).toFixed(2)} / p99 ` +
      `${percentile(commits, 99).toFixed(2)} ms, the longest ${(commits.at(-1) ?? 0).toFixed(1)} ms, ` +
      `${commits.filter((ms) => ms > 10).length} over 10 ms (a commit holds the one connection and the thread; ` +
      'one that checkpoints the WAL itself takes tens of ms)',
  );
}

/**
 * One and then two control-plane processes on one PostgreSQL schema and the external broker: the same 50
 * devices drive a queue through the first alone, then split between both.
 */
async function replicas(): Promise<{ one: FloorRun; two: FloorRun }> {
  const procs: ControlPlaneProcess[] = [];
  try {
    const first = await startControlPlaneProcess('postgres', { mqttUrl: MQTT_URL, poolSize: POOL_SIZE });
    procs.push(first);
    const second = await startControlPlaneProcess('postgres', {
      join: first.databaseUrl!,
      mqttUrl: MQTT_URL,
      poolSize: POOL_SIZE,
    });
    procs.push(second);
    const call = httpCaller(first.url);
    const devices = await enrollLoadDevices({ call, url: first.url }, first.key, DEVICES, PRINTERS);
    // As the in-process floors: measured on tables that hold a floor's history, analysed after it.
    printHistory(
      'two processes, their history (one process)',
      await floorHistory(call, first.key, [first.url], first.databaseUrl!, devices),
    );
    const drive = async (urls: string[]): Promise<FloorRun> => {
      await queuePrintJobs(call, first.key, JOBS);
      await devices.refresh();
      // Where the CPU goes while it runs: each replica, PostgreSQL's backends, the devices (this process).
      const cpu = () => [
        cpuSecondsOf(first.pid),
        cpuSecondsOf(second.pid),
        cpuSecondsOfName('postgres'),
        cpuSecondsOf(process.pid),
      ];
      let before = cpu();
      const out = await runLoad({ urls, devices, protocol: 'batch', printers: PRINTERS }, () => {
        before = cpu();
      });
      const used = cpu().map((c, i) => (c - before[i]!) / out.seconds);
      console.log(
        `  ${urls.length} replica(s): ${(out.sealed / out.seconds).toFixed(0)} jobs/s; CPU in cores: replica A ` +
          `${used[0]!.toFixed(2)}, replica B ${used[1]!.toFixed(2)}, PostgreSQL ${used[2]!.toFixed(2)}, ` +
          `devices ${used[3]!.toFixed(2)}; load average ${load()}`,
      );
      if (out.sealed !== JOBS) throw new Error(`sealed ${out.sealed} of ${JOBS}`);
      return {
        perSecond: out.sealed / out.seconds,
        claimMs: out.claimMs.sort((a, b) => a - b),
        firstClaimMs: out.firstClaimMs.sort((a, b) => a - b),
        resultMs: out.resultMs.sort((a, b) => a - b),
      };
    };
    const one = await drive([first.url]);
    // The two start from statistics taken after the one's floor, as the one did after the history.
    await analyzeSchema(first.databaseUrl!);
    const two = await drive([first.url, second.url]);
    return { one, two };
  } finally {
    for (const p of procs.reverse()) await p.stop();
  }
}

/**
 * The memory soak (opt-in): SOAK_JOBS jobs sealed in waves against a control plane in its own process; its
 * RSS before the first wave and after the last.
 */
async function soak(): Promise<{ startRss: number; warmRss: number; endRss: number; perSecond: number }> {
  const cp = await startControlPlaneProcess('sqlite');
  try {
    const call = httpCaller(cp.url);
    const devices = await enrollLoadDevices({ call, url: cp.url }, cp.key, DEVICES, PRINTERS);
    const startRss = cp.rss();
    process.stderr.write(`  soak: RSS before the first job ${(startRss / 2 ** 20).toFixed(0)} MB\n`);
    let sealed = 0;
    let seconds = 0;
    let warmRss = 0;
    for (let done = 0; done < SOAK_JOBS; done += SOAK_WAVE) {
      const wave = Math.min(SOAK_WAVE, SOAK_JOBS - done);
      await queuePrintJobs(call, cp.key, wave);
      await devices.refresh();
      const out = await runLoad({ urls: [cp.url], devices, protocol: 'batch', printers: PRINTERS });
      sealed += out.sealed;
      seconds += out.seconds;
      if (done === 0) warmRss = cp.rss();
      process.stderr.write(`  soak: ${done + wave} jobs sealed, RSS ${(cp.rss() / 2 ** 20).toFixed(0)} MB\n`);
    }
    if (sealed !== SOAK_JOBS) throw new Error(`soak sealed ${sealed} of ${SOAK_JOBS}`);
    return { startRss, warmRss, endRss: cp.rss(), perSecond: sealed / seconds };
  } finally {
    await cp.stop();
  }
}

/** Time from a job's creation answer to its notice at each of 1,000 connected devices. */
async function noticeLatency(): Promise<number[]> {
  const t = await startTestControlPlane({ mqtt: true, env: { RATE_LIMITS: 'mid_market=1000000000/60' } });
  const clients: MqttClient[] = [];
  try {
    const admin = t.tenants.a.admin;
    const devices = [];
    for (let i = 0; i < NOTICE_DEVICES; i += 50) {
      devices.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, k) => enrollTestDevice(t, admin, { name: `n-${i + k}` })),
        )),
      );
    }
    const received = new Map<string, number[]>();
    for (let i = 0; i < devices.length; i += 100) {
      const batch = devices.slice(i, i + 100);
      clients.push(
        ...(await Promise.all(
          batch.map(async (d) => {
            const c = await mqtt.connectAsync(d.mqttUrl!, {
              username: d.id,
              password: await d.accessToken(),
              reconnectPeriod: 0,
            });
            c.on('message', (_topic, payload) => {
              const { jobRef } = JSON.parse(payload.toString()) as { jobRef: string };
              const list = received.get(jobRef) ?? [];
              list.push(performance.now());
              received.set(jobRef, list);
            });
            await c.subscribeAsync(deviceTopics(d.tenantId, d.id).workNotice, { qos: 1 });
            return c;
          }),
        )),
      );
    }
    const p = await printableProduct(t.call, admin, NOTICES);
    const latencies: number[] = [];
    for (const serial of p.serials) {
      const r = await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial } });
      const sent = performance.now();
      const ref = r.body.data.jobRef as string;
      const deadline = Date.now() + 10_000;
      while ((received.get(ref)?.length ?? 0) < NOTICE_DEVICES && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 10));
      }
      const got = received.get(ref) ?? [];
      if (got.length < NOTICE_DEVICES)
        throw new Error(`only ${got.length} of ${NOTICE_DEVICES} devices heard ${ref}`);
      latencies.push(...got.map((at) => Math.max(0, at - sent)));
    }
    return latencies.sort((a, b) => a - b);
  } finally {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    await t.close();
  }
}

/**
 * The claims of a floor split in two: each device's first claim (the devices start together, so these are
 * a burst of one claim per device on a control plane not called yet, answered one after another) and every
 * later one. The figure of the table counts both.
 */
function printStartBurst(what: string, run: FloorRun): void {
  const first = run.firstClaimMs;
  const later = [...run.claimMs];
  for (const ms of first) later.splice(later.indexOf(ms), 1);
  const ms = (xs: number[], p: number) => percentile(xs, p).toFixed(1);
  console.log(
    `  ${what}: each device's first claim (${first.length} at once at the start) p50 ${ms(first, 50)} / p99 ` +
      `${ms(first, 99)} ms; the ${later.length} claims after them p50 ${ms(later, 50)} / p99 ${ms(later, 99)} ms`,
  );
  const b = run.burst;
  if (!b) return;
  const at = (x: number) => x.toFixed(1);
  console.log(
    `  ${what}: the same claims on the control plane's server, in ms after the go: the ${b.claims} devices' ` +
      `connections accepted by ${at(b.acceptedBy)}, their first claims read from ${at(b.firstRead)} and the last ` +
      `answered at ${at(b.lastAnswered)}; ${b.readAfterTheOneBefore} of ${b.claims - 1} read only once the claim ` +
      `before was answered; each ${at(b.serviceP50)} (p50) / ${at(b.serviceMax)} (longest) from read to answer`,
  );
}

/** Claim latency, beside the latency of the results calls of the same run (claims go first in line). */
function claimRows(dialect: string, run: FloorRun): BenchRow[] {
  const { claimMs, resultMs } = run;
  printInside(`flat-out floor (${dialect})`, run);
  if (run.treeHeads !== undefined)
    console.log(
      `  flat-out floor (${dialect}): the transparency log signed ${run.treeHeads} tree heads for ${JOBS} sealed jobs`,
    );
  printStartBurst(`flat-out floor (${dialect})`, run);
  const p50 = percentile(claimMs, 50);
  const p99 = percentile(claimMs, 99);
  return [
    {
      work: `  claim call latency p50, ${DEVICES} devices x ${PRINTERS} printers flat out (${dialect})`,
      figure: p50,
      unit: 'ms',
      peer: { label: 'results batch call p50', figure: percentile(resultMs, 50) },
      target: '<= 10 ms',
      met: p50 <= 10,
    },
    {
      work: `  claim call latency p99 (${dialect})`,
      figure: p99,
      unit: 'ms',
      peer: { label: 'results batch call p99', figure: percentile(resultMs, 99) },
      target: '<= 50 ms',
      met: p99 <= 50,
    },
  ];
}

/** Claim latency on the paced floor (50 printers at their mechanical limit); prints the rate it sealed at. */
function pacedRows(dialect: string, run: FloorRun): BenchRow[] {
  const offered = DEVICES * PACED_LABELS_PER_SECOND;
  console.log(
    `  paced floor (${dialect}): ${run.perSecond.toFixed(0)} jobs/s sealed of ${offered.toFixed(0)} offered`,
  );
  printInside(`paced floor (${dialect})`, run);
  const p50 = percentile(run.claimMs, 50);
  const p99 = percentile(run.claimMs, 99);
  const floor = `${DEVICES} RFID printers at their mechanical limit, ${offered.toFixed(0)} jobs/s offered`;
  return [
    {
      work: `  claim call latency p50, ${floor} (${dialect})`,
      figure: p50,
      unit: 'ms',
      peer: { label: 'results batch call p50', figure: percentile(run.resultMs, 50) },
      target: '<= 10 ms',
      met: p50 <= 10,
    },
    {
      work: `  claim call latency p99, the same floor (${dialect})`,
      figure: p99,
      unit: 'ms',
      peer: { label: 'results batch call p99', figure: percentile(run.resultMs, 99) },
      target: '<= 50 ms',
      met: p99 <= 50,
    },
  ];
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  console.log(`load average at start: ${load()}`);
  if (process.env.TEST_DATABASE_URL)
    console.log(
      `PostgreSQL connections per control plane and for pg-boss: ${POOL_SIZE}` +
        (process.env.DATABASE_POOL_SIZE ? ' (DATABASE_POOL_SIZE)' : " (twice this machine's cores)"),
    );
  for (const dialect of testDialects()) {
    printProfile(dialect, await inProcess(dialect, 'batch', PROFILED_JOBS, true));
    const batched = await inProcess(dialect, 'batch', JOBS, false);
    const single = await inProcess(dialect, 'single', SINGLE_JOBS, false);
    const work = `print jobs sealed via HTTP, ${DEVICES} devices, batched calls (${dialect})`;
    if (dialect === 'postgres') {
      const boss = await pgBossRate(process.env.TEST_DATABASE_URL!, JOBS, DEVICES, Number(POOL_SIZE));
      const ratio = batched.perSecond / boss;
      rows.push({
        work,
        figure: batched.perSecond,
        unit: 'jobs/s',
        peer: { label: `pg-boss fetch+complete, ${DEVICES} workers`, figure: boss },
        ratio,
        target: '>= 1.0 of pg-boss',
        met: ratio >= 1,
      });
    } else {
      rows.push({
        work,
        figure: batched.perSecond,
        unit: 'jobs/s',
        target: '>= 1,000 jobs/s',
        met: batched.perSecond >= 1000,
      });
    }
    // The same claims on a floor that claims only as fast as its printers print: the latency of the claim
    // itself and of a writer that is not saturated, beside the flat-out figures where claims queue.
    const paced = await inProcess(dialect, 'batch', PACED_JOBS, false, {
      printers: 1,
      printerLabelsPerSecond: PACED_LABELS_PER_SECOND,
    });
    rows.push(...claimRows(dialect, batched), ...pacedRows(dialect, paced), {
      work: `  one request per result (6 a job), ${DEVICES} devices (${dialect})`,
      figure: single.perSecond,
      unit: 'jobs/s',
      peer: { label: 'batched, same run', figure: batched.perSecond },
      ratio: single.perSecond / batched.perSecond,
      target: '>= 20 jobs/s',
      met: single.perSecond >= 20,
    });
    // The claim latency of one request per result, with the targets it has had since the first floor.
    printInside(`one request per result (${dialect})`, single);
    const singleP50 = percentile(single.claimMs, 50);
    const singleP99 = percentile(single.claimMs, 99);
    rows.push(
      {
        work: `    claim latency p50, one request per result (${dialect})`,
        figure: singleP50,
        unit: 'ms',
        target: '<= 50 ms',
        met: singleP50 <= 50,
      },
      {
        work: `    claim latency p99, one request per result (${dialect})`,
        figure: singleP99,
        unit: 'ms',
        target: `<= 500 ms with ${DEVICES} devices at once`,
        met: singleP99 <= 500,
      },
    );
  }
  if (process.env.TEST_DATABASE_URL) {
    const r = await replicas();
    const ratio = r.two.perSecond / r.one.perSecond;
    rows.push(
      {
        work: `two control-plane processes, one PostgreSQL, Mosquitto (${DEVICES} devices split)`,
        figure: r.two.perSecond,
        unit: 'jobs/s',
        peer: { label: 'one process, same devices', figure: r.one.perSecond },
        ratio,
        target: '>= 1.8 of one',
        met: ratio >= 1.8,
      },
      ...claimRows('postgres, two processes', r.two),
    );
  }
  if (SOAK_JOBS > 0) {
    const s = await soak();
    const mb = (b: number) => b / 2 ** 20;
    rows.push({
      work: `control plane RSS after ${SOAK_JOBS.toLocaleString('en-US')} jobs sealed (SQLite, ${s.perSecond.toFixed(0)} jobs/s)`,
      figure: mb(s.endRss),
      unit: 'MB',
      peer: { label: 'RSS before the first job', figure: mb(s.startRss) },
      ratio: s.endRss / s.startRss,
      target: 'flat: <= start + 64 MB',
      met: s.endRss <= s.startRss + 64 * 2 ** 20,
    });
    // Where the growth happens, for reading the row above (it is not a second target).
    console.log(
      `  soak: RSS ${mb(s.warmRss).toFixed(0)} MB after the first ${SOAK_WAVE.toLocaleString('en-US')} jobs, ` +
        `${mb(s.endRss - s.warmRss).toFixed(0)} MB more by the last`,
    );
  }
  const notice = await noticeLatency();
  rows.push(
    {
      work: `MQTT work notice latency p50, ${NOTICE_DEVICES} devices`,
      figure: percentile(notice, 50),
      unit: 'ms',
      target: '<= 250 ms',
      met: percentile(notice, 50) <= 250,
    },
    {
      work: `  notice latency p99, ${NOTICE_DEVICES} devices`,
      figure: percentile(notice, 99),
      unit: 'ms',
      target: '<= 1,000 ms',
      met: percentile(notice, 99) <= 1000,
    },
  );
  console.log(`load average at end: ${load()}`);
  return rows;
}
