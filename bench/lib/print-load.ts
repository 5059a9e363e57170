/**
 * The load of the AIDC benchmark, run in a worker thread so that the simulated devices (HTTP clients that
 * also sign evidence bundles) do not share the control plane's event loop: each device claims a job and
 * drives it to SEALED over HTTP, again and again until there is no work. Posts back the claim latencies and
 * how many jobs it sealed in how long.
 */
import { type JsonWebKey, webcrypto } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { HttpPrintDevice, httpCaller, type EnrolledTestDevice } from '@dpp/testkit';

export interface LoadDevice {
  id: string;
  tenantId: string;
  token: string;
  privateJwk: JsonWebKey;
  publicJwk: EnrolledTestDevice['key']['publicJwk'];
}

export interface LoadInput {
  url: string;
  devices: LoadDevice[];
}

export interface LoadOutput {
  claimMs: number[];
  sealed: number;
  seconds: number;
}

async function run(input: LoadInput): Promise<LoadOutput> {
  const call = httpCaller(input.url);
  const devices = await Promise.all(
    input.devices.map(async (d) => {
      const device: EnrolledTestDevice = {
        id: d.id,
        tenantId: d.tenantId,
        key: {
          privateKey: await webcrypto.subtle.importKey('jwk', d.privateJwk, { name: 'Ed25519' }, false, [
            'sign',
          ]),
          publicJwk: d.publicJwk,
        },
        tokenEndpoint: `${input.url}/api/v2/oauth/token`,
        mqttUrl: null,
        accessToken: () => Promise.resolve(d.token),
      };
      return new HttpPrintDevice(call, device).init();
    }),
  );
  const claimMs: number[] = [];
  let sealed = 0;
  const started = performance.now();
  await Promise.all(
    devices.map(async (d) => {
      for (;;) {
        const c0 = performance.now();
        const c = await d.claim();
        claimMs.push(performance.now() - c0);
        if (!c) return;
        await d.seal(c);
        sealed += 1;
      }
    }),
  );
  return { claimMs, sealed, seconds: (performance.now() - started) / 1000 };
}

if (parentPort) {
  const port = parentPort;
  run(workerData as LoadInput).then(
    (out) => port.postMessage({ ok: true, out }),
    (err: unknown) => port.postMessage({ ok: false, error: String(err instanceof Error ? err.stack : err) }),
  );
}
