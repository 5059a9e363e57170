/**
 * The compose file's `demo-floor` service, natively: `npm run demo-floor` against two replicas on one
 * PostgreSQL schema behind a round-robin proxy (the compose file's nginx), with the shipped Mosquitto and device
 * logins administered on it. It writes the demo workspace into the shared database, enrolls its agent with a
 * simulated RFID printer through the proxy, and every demo label ends SEALED, with device requests served by
 * both replicas and the agent online on the broker under its own login.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { type RoundRobin, roundRobin } from './support/round-robin.js';
import { type ShippedBroker, startShippedBroker } from './support/shipped-broker.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const LABELS = 3;

async function until<T>(what: string, fn: () => T | null, timeoutMs: number, output: () => string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== null) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; the demo floor's output ends:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function readLog(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!process.env.TEST_DATABASE_URL)(
  'npm run demo-floor (the compose demo) across two replicas',
  () => {
    let broker: ShippedBroker | null = null;
    let t: TestControlPlane | null = null;
    let proxy: RoundRobin | null = null;
    let child: ChildProcess | null = null;
    let dataDir = '';
    afterAll(async () => {
      child?.kill('SIGKILL');
      const record = await readFile(path.join(dataDir, 'demo-agent', 'floor.json'), 'utf8').catch(() => null);
      if (record) {
        const { simPid, agentPid } = JSON.parse(record) as { simPid: number; agentPid: number };
        for (const pid of [simPid, agentPid]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
      await proxy?.close();
      await t?.close();
      await broker?.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });

    it(
      'seals every demo label through the proxy; both replicas serve the device',
      { timeout: 300_000 },
      async () => {
        broker = await startShippedBroker();
        t = await startTestControlPlane({
          dialect: 'postgres',
          env: {
            MQTT_URL: broker.controlPlaneUrl,
            MQTT_DEVICE_AUTH: 'dynamic-security',
            MQTT_DEVICE_SECRET: 'demo-floor-test-device-secret-0123456789',
          },
        });
        const second = await t.replica();
        proxy = await roundRobin([t.url, second.url]);
        dataDir = await mkdtemp(path.join(os.tmpdir(), 'dpp-demo-floor-'));
        let output = '';
        child = spawn(
          process.execPath,
          ['--import', 'tsx', path.join(repo, 'control-plane/src/demo-floor.ts')],
          {
            cwd: repo,
            env: {
              ...process.env,
              DATABASE_URL: t.databaseUrl!,
              CONTROL_PLANE_URL: proxy.url,
              PUBLIC_BASE_URL: proxy.url,
              DATA_DIR: dataDir,
              DPP_DEMO_LABELS: String(LABELS),
              DPP_DEMO_CONSOLE_PORT: String(await freePort()),
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
        child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
        // On a timeout: the floor's own lines, what its agent warned about, its last lines and the simulator's.
        const out = () => {
          const agentLog = readLog(path.join(dataDir, 'demo-agent', 'agent.log')).split('\n');
          const simLog = readLog(path.join(dataDir, 'demo-agent', 'sim.log')).split('\n');
          const warnings = agentLog.filter((l) => /"level":(4|5|6)0/.test(l));
          return [output.slice(-3000), '--- agent warnings:', ...warnings.slice(-30), '--- agent log ends:']
            .concat(agentLog.slice(-20), ['--- simulator log ends:'], simLog.slice(-20))
            .join('\n');
        };

        await until('the demo labels', () => /(\d+) of (\d+) demo labels SEALED/.exec(output), 180_000, out);
        expect(output).toContain(`${LABELS} of ${LABELS} demo labels SEALED`);
        const apiKey = /Demo API key \(all scopes\): (\S+)/.exec(output)![1]!;

        // The last demo label carries a QR code, a DataMatrix and an RFID tag, each proven and read after
        // printing; the others a QR code and the tag.
        const list = await t.call('GET', '/api/v2/aidc/jobs?state=SEALED', { key: apiKey });
        const types = (list: unknown) => (list as { type: string }[]).map((c) => c.type);
        const carriers = [];
        for (const { jobRef } of list.body.data as { jobRef: string }[]) {
          const job = await t.call('GET', `/api/v2/aidc/jobs/${jobRef}`, { key: apiKey });
          const evidence = Object.fromEntries(
            (job.body.data.evidence as { kind: string; payload: Record<string, unknown> }[]).map((e) => [
              e.kind,
              e.payload,
            ]),
          );
          expect(evidence.attestation).toMatchObject({ method: 'rfid_readback' });
          carriers.push([
            types(evidence.render_manifest!.carriers),
            types(evidence.scan_result!.carriers).sort(),
          ]);
        }
        expect(carriers).toContainEqual([
          ['qr', 'datamatrix', 'rfid'],
          ['datamatrix', 'qr'],
        ]);
        expect(carriers.filter(([rendered]) => rendered!.includes('datamatrix'))).toHaveLength(1);

        // Device requests went through both replicas.
        for (const [upstream, paths] of proxy.served)
          expect(
            paths.filter((p) => p.includes('/api/v2/aidc/jobs/')).length,
            `${upstream} served no device request`,
          ).toBeGreaterThan(0);

        // The agent is on the broker with its own login: its retained presence says online.
        const devices = await t.call('GET', '/api/v2/devices', { key: apiKey });
        const device = (devices.body.data as { id: string; name: string }[]).find(
          (d) => d.name === 'demo-line',
        )!;
        const watcher = await mqtt.connectAsync(broker.url, {
          username: 'control-plane',
          password: broker.secrets.MQTT_CONTROL_PLANE_PASSWORD,
          reconnectPeriod: 0,
        });
        try {
          const online = new Promise<string>((resolve) =>
            watcher.on('message', (topic, payload) => {
              if (topic.endsWith(`/devices/${device.id}/presence`)) resolve(payload.toString());
            }),
          );
          await watcher.subscribeAsync(`dpp/+/devices/${device.id}/presence`, { qos: 1 });
          expect(JSON.parse(await online)).toMatchObject({ status: 'online' });
        } finally {
          await watcher.endAsync(true);
        }

        // A stop stops the floor with it.
        const record = JSON.parse(await readFile(path.join(dataDir, 'demo-agent', 'floor.json'), 'utf8')) as {
          simPid: number;
          agentPid: number;
        };
        const exited = new Promise((r) => child!.once('exit', r));
        child.kill('SIGTERM');
        await exited;
        expect([record.simPid, record.agentPid].filter(alive)).toEqual([]);
      },
    );
  },
);
