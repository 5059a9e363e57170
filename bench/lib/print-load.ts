/**
 * The load of the AIDC benchmark, run in a worker thread so that the simulated devices (HTTP clients that
 * also sign evidence bundles) do not share the control plane's event loop: each device claims a job and
 * drives it to SEALED over HTTP, again and again until there is no work. Posts back the claim latencies and
 * how many jobs it sealed in how long.
 */
import { type JsonWebKey, webcrypto } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { httpCaller, keepAliveTransport } from '@dpp/control-plane';
import { HttpPrintDevice, type EnrolledTestDevice } from '@dpp/testkit';
import { processCpuSeconds, statCpuSeconds, threadCpuSeconds } from './proc-cpu.js';

export interface LoadDevice {
  id: string;
  tenantId: string;
  token: string;
  privateJwk: JsonWebKey;
  publicJwk: EnrolledTestDevice['key']['publicJwk'];
}

export interface LoadInput {
  /** Control planes (replicas): device i talks to urls[i % urls.length]. */
  urls: string[];
  devices: LoadDevice[];
  /**
   * `single`: one claim and one request per result, as the agent does today. `batch`: each device claims
   * for `printers` printers in one call and reports every job's results in one batch
   * (docs/device-protocol.md, "Batches").
   */
  protocol: 'single' | 'batch';
  printers: number;
  /**
   * Labels a second each printer can take (its mechanical limit): a device then claims no faster than its
   * printers print, as a real floor does. Without it the devices go flat out, as fast as the control plane
   * answers.
   */
  printerLabelsPerSecond?: number;
}

export interface LoadOutput {
  claimMs: number[];
  /** Of `claimMs`, each device's first claim: sent all at once at the start, on a control plane not yet called. */
  firstClaimMs: number[];
  /** Latency of each call that reported results (one result, or one batch). */
  resultMs: number[];
  sealed: number;
  seconds: number;
  /** The share of the run the devices' thread was busy (its event loop's utilization, 0 to 1). */
  busy: number;
  /**
   * Cores this process used in the run: its main thread (the control plane, when it runs in this process), the
   * devices' thread, and the rest of the process (V8's garbage collection and compiler helpers, libuv's pool).
   * Undefined without Linux's /proc.
   */
  cores?: { main: number; devices: number; rest: number };
}

/** CPU seconds so far of this process's main thread, of this thread and of the whole process. */
function cpuNow() {
  return {
    main: statCpuSeconds(`/proc/self/task/${process.pid}/stat`),
    devices: threadCpuSeconds(),
    all: processCpuSeconds(),
  };
}

function coresSince(before: ReturnType<typeof cpuNow>, seconds: number): LoadOutput['cores'] {
  const after = cpuNow();
  if ([before.main, before.devices, before.all, after.main, after.devices, after.all].includes(null))
    return undefined;
  const main = after.main! - before.main!;
  const devices = after.devices! - before.devices!;
  const rest = after.all! - before.all! - main - devices;
  return { main: main / seconds, devices: devices / seconds, rest: Math.max(0, rest) / seconds };
}

async function run(input: LoadInput): Promise<LoadOutput> {
  const devices = await Promise.all(
    input.devices.map(async (d, i) => {
      const url = input.urls[i % input.urls.length]!;
      const device: EnrolledTestDevice = {
        id: d.id,
        tenantId: d.tenantId,
        key: {
          privateKey: await webcrypto.subtle.importKey('jwk', d.privateJwk, { name: 'Ed25519' }, false, [
            'sign',
          ]),
          publicJwk: d.publicJwk,
        },
        tokenEndpoint: `${url}/api/v2/oauth/token`,
        mqttUrl: null,
        accessToken: () => Promise.resolve(d.token),
      };
      // node:http on kept-alive connections: the devices share the machine's cores (docs/benchmarks.md, round 13).
      return new HttpPrintDevice(httpCaller(url, keepAliveTransport()), device).init();
    }),
  );
  // Ready: the parent starts what it measures (profiler, CPU and event-loop counters) and says go, so that none of
  // it covers this worker's start (loading this script, importing the keys: seconds under the profiler).
  await ready();
  const claimMs: number[] = [];
  const firstClaimMs: number[] = [];
  const resultMs: number[] = [];
  let sealed = 0;
  const started = performance.now();
  const loopBefore = performance.eventLoopUtilization();
  const cpuBefore = cpuNow();
  const printers = Array.from({ length: input.printers }, (_, i) => ({ name: `zebra-${i + 1}` }));
  // A paced device's printers take one label each per period; a call answered late does not catch up.
  const periodMs = input.printerLabelsPerSecond ? 1000 / input.printerLabelsPerSecond : 0;
  const pace = async (since: number) => {
    const rest = since + periodMs - performance.now();
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
  };
  await Promise.all(
    devices.map(async (d, i) => {
      // Paced printers do not start in step: each device's period begins at its own offset, as on a floor.
      if (periodMs > 0) await pace(performance.now() - periodMs + (periodMs * i) / devices.length);
      for (let first = true; ; first = false) {
        const c0 = performance.now();
        const claimed = () => {
          const ms = performance.now() - c0;
          claimMs.push(ms);
          if (first) firstClaimMs.push(ms);
        };
        if (input.protocol === 'single') {
          const c = await d.claim();
          claimed();
          if (!c) return;
          const r0 = performance.now();
          await d.seal(c);
          resultMs.push((performance.now() - r0) / 5);
          sealed += 1;
          await pace(c0);
        } else {
          const claims = await d.claimMany(printers);
          claimed();
          if (claims.length === 0) return;
          const r0 = performance.now();
          await d.sealMany(claims);
          resultMs.push(performance.now() - r0);
          sealed += claims.length;
          await pace(c0);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cores = coresSince(cpuBefore, seconds);
  return {
    claimMs,
    firstClaimMs,
    resultMs,
    sealed,
    seconds,
    busy: performance.eventLoopUtilization(loopBefore).utilization,
    ...(cores ? { cores } : {}),
  };
}

/** Tells the parent the devices are ready, and waits for its go. */
function ready(): Promise<void> {
  const port = parentPort;
  if (!port) return Promise.resolve();
  return new Promise((resolve) => {
    port.once('message', () => resolve());
    port.postMessage({ ready: true });
  });
}

if (parentPort) {
  const port = parentPort;
  run(workerData as LoadInput).then(
    (out) => port.postMessage({ ok: true, out }),
    (err: unknown) => port.postMessage({ ok: false, error: String(err instanceof Error ? err.stack : err) }),
  );
}
