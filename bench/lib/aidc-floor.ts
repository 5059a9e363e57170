/**
 * The print floor of the AIDC benchmarks, over HTTP like an integrator and its devices: jobs queued on
 * printable products, devices enrolled for their printers, and the load itself in a worker thread
 * (print-load.ts) so the devices do not share the control plane's event loop.
 */
import { KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { ApiCaller } from '@dpp/control-plane';
import {
  type EnrolledTestDevice,
  enrollTestDevice,
  printableProduct,
  type TestControlPlane,
} from '@dpp/testkit';
import type { LoadDevice, LoadInput, LoadOutput } from './print-load.js';

/** Serials allocated per product (one carriers batch). */
const SERIALS_PER_PRODUCT = 10_000;
/** Job creations in flight at once. */
const CREATES_IN_FLIGHT = 16;

/** Queues `count` print jobs, on as many printable products as the serials need. */
export async function queuePrintJobs(call: ApiCaller, key: string, count: number): Promise<void> {
  for (let left = count; left > 0; left -= SERIALS_PER_PRODUCT) {
    const p = await printableProduct(call, key, Math.min(left, SERIALS_PER_PRODUCT));
    for (let i = 0; i < p.serials.length; i += CREATES_IN_FLIGHT) {
      await Promise.all(
        p.serials.slice(i, i + CREATES_IN_FLIGHT).map(async (serial) => {
          const r = await call('POST', '/api/v2/aidc/jobs', { key, body: { gtin: p.gtin, serial } });
          if (r.status !== 201) throw new Error(`job: ${r.status} ${r.text}`);
        }),
      );
    }
  }
}

export const printerNames = (n: number) => Array.from({ length: n }, (_, i) => `zebra-${i + 1}`);

/**
 * Enrolls `count` devices for `printers` printers each, with an access token each. `refresh()` gets every
 * device a fresh token (they live ACCESS_TOKEN_TTL_SECONDS, 15 minutes by default: a long run renews them).
 */
export async function enrollLoadDevices(
  t: Pick<TestControlPlane, 'call' | 'url'>,
  key: string,
  count: number,
  printers: number,
): Promise<LoadDevice[] & { refresh(): Promise<void> }> {
  const enrolled: EnrolledTestDevice[] = [];
  for (let i = 0; i < count; i += 10) {
    enrolled.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(10, count - i) }, (_, k) =>
          enrollTestDevice(t as TestControlPlane, key, {
            name: `bench-${i + k}`,
            printerNames: printerNames(printers),
          }),
        ),
      )),
    );
  }
  const devices: LoadDevice[] = [];
  for (const d of enrolled) {
    devices.push({
      id: d.id,
      tenantId: d.tenantId,
      token: await d.accessToken(),
      privateJwk: KeyObject.from(d.key.privateKey).export({ format: 'jwk' }),
      publicJwk: d.key.publicJwk,
    });
  }
  return Object.assign(devices, {
    refresh: async () => {
      for (const [i, d] of enrolled.entries()) devices[i]!.token = await d.accessToken();
    },
  });
}

type LoadMessage = { ready: true } | { ok: true; out: LoadOutput } | { ok: false; error: string };

/**
 * Runs the devices in a worker thread until no device finds work. `onReady` runs once the worker has started and
 * its devices are ready, before the first claim: what a caller measures of the load begins there, not with the
 * worker's start.
 */
export function runLoad(input: LoadInput, onReady?: () => void | Promise<void>): Promise<LoadOutput> {
  return new Promise<LoadOutput>((resolve, reject) => {
    // The worker registers tsx itself before loading the TypeScript load script (Node 20 does not hand
    // the parent's loader to a worker's entry).
    const script = new URL('./print-load.ts', import.meta.url).href;
    const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(script)}); })`;
    // Plain copies: the list may carry its `refresh` (functions do not cross to a worker).
    const data: LoadInput = { ...input, devices: input.devices.map((d) => ({ ...d })) };
    const worker = new Worker(boot, { eval: true, workerData: data });
    worker.on('message', (m: LoadMessage) => {
      if ('ready' in m) {
        Promise.resolve(onReady?.()).then(
          () => worker.postMessage('go'),
          (err: unknown) => {
            reject(err as Error);
            void worker.terminate();
          },
        );
      } else if (m.ok) resolve(m.out);
      else reject(new Error(m.error));
    });
    worker.once('error', reject);
  });
}

/** The p-th percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
