import { performance } from 'node:perf_hooks';
import { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import mqtt, { type MqttClient } from 'mqtt';
import { deviceTopics } from '@dpp/shared';
import {
  type DialectName,
  enrollTestDevice,
  printableProduct,
  startTestControlPlane,
  testDialects,
} from '@dpp/testkit';
import type { LoadDevice, LoadInput, LoadOutput } from './lib/print-load.js';
import type { BenchRow } from './lib/table.js';

const JOBS = 400;
const DEVICES = 50;
const NOTICE_DEVICES = 1000;
const NOTICES = 10;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * 50 simulated devices claim and drive jobs to SEALED over HTTP until the queue is empty. The devices run
 * in a worker thread (lib/print-load.ts), so the control plane's event loop is its own, as in production.
 */
async function sealedPerSecond(dialect: DialectName): Promise<{ perSecond: number; claimMs: number[] }> {
  const t = await startTestControlPlane({ dialect, env: { RATE_LIMITS: 'mid_market=1000000000/60' } });
  try {
    const admin = t.tenants.a.admin;
    const p = await printableProduct(t.call, admin, JOBS);
    for (const serial of p.serials) {
      const r = await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial } });
      if (r.status !== 201) throw new Error(`job: ${r.status} ${r.text}`);
    }
    const devices: LoadDevice[] = await Promise.all(
      Array.from({ length: DEVICES }, async (_, i) => {
        const d = await enrollTestDevice(t, admin, { name: `bench-${i}` });
        return {
          id: d.id,
          tenantId: d.tenantId,
          token: await d.accessToken(),
          privateJwk: KeyObject.from(d.key.privateKey).export({ format: 'jwk' }),
          publicJwk: d.key.publicJwk,
        };
      }),
    );
    const input: LoadInput = { url: t.url, devices };
    const out = await new Promise<LoadOutput>((resolve, reject) => {
      // The worker registers tsx itself before loading the TypeScript load script (Node 20 does not hand
      // the parent's loader to a worker's entry).
      const script = new URL('./lib/print-load.ts', import.meta.url).href;
      const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(script)}); })`;
      const worker = new Worker(boot, { eval: true, workerData: input });
      worker.once('message', (m: { ok: true; out: LoadOutput } | { ok: false; error: string }) =>
        m.ok ? resolve(m.out) : reject(new Error(m.error)),
      );
      worker.once('error', reject);
    });
    if (out.sealed !== JOBS) throw new Error(`sealed ${out.sealed} of ${JOBS}`);
    return { perSecond: out.sealed / out.seconds, claimMs: out.claimMs.sort((a, b) => a - b) };
  } finally {
    await t.close();
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

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const dialect of testDialects()) {
    const { perSecond, claimMs } = await sealedPerSecond(dialect);
    rows.push(
      {
        work: `print jobs sealed via HTTP, ${DEVICES} devices (${dialect})`,
        figure: perSecond,
        unit: 'jobs/s',
        target: '>= 20 jobs/s (6 requests each)',
        met: perSecond >= 20,
      },
      {
        work: `  claim latency p50 (${dialect})`,
        figure: percentile(claimMs, 50),
        unit: 'ms',
        target: '<= 50 ms',
        met: percentile(claimMs, 50) <= 50,
      },
      {
        work: `  claim latency p99 (${dialect})`,
        figure: percentile(claimMs, 99),
        unit: 'ms',
        target: `<= 500 ms with ${DEVICES} devices at once`,
        met: percentile(claimMs, 99) <= 500,
      },
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
  return rows;
}
