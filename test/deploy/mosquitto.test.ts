/**
 * The Mosquitto configuration the repository ships (deploy/mosquitto/), started by the test on a free port
 * with the machine's Mosquitto: dynamic security is initialised on the first start, the control plane's own
 * client is created through it, the control plane starts with that login, and nobody gets in without one.
 * (Never the broker already on 1883.)
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane } from '@dpp/testkit';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const PLUGINS = [
  '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/mosquitto_dynamic_security.so',
];

/** The shipped configuration, moved to `dir` and `port` (and to this machine's plugin path and user). */
function nativeConf(dir: string, port: number): string {
  const plugin = PLUGINS.find((p) => existsSync(p));
  if (!plugin)
    throw new Error(
      'Mosquitto 2 with its dynamic-security plugin is missing; CI installs it: apt-get install -y mosquitto',
    );
  const conf = readFileSync(path.join(repo, 'deploy/mosquitto/mosquitto.conf'), 'utf8')
    .replace(/^listener 1883$/m, `listener ${port} 127.0.0.1`)
    .replace('/usr/lib/mosquitto_dynamic_security.so', plugin)
    .replaceAll('/mosquitto/data/', `${dir}/`);
  const file = path.join(dir, 'mosquitto.conf');
  // Started as root, Mosquitto drops to the user `mosquitto`, which cannot read this temp folder.
  writeFileSync(file, `${conf}\nuser ${os.userInfo().username}\n`);
  return file;
}

async function refused(url: string, opts: mqtt.IClientOptions): Promise<boolean> {
  try {
    const c = await mqtt.connectAsync(url, { ...opts, reconnectPeriod: 0, connectTimeout: 3_000 });
    await c.endAsync(true);
    return false;
  } catch {
    return true;
  }
}

describe('Mosquitto as the repository ships it (dynamic security)', () => {
  let dir: string;
  let port: number;
  let broker: ChildProcess;
  let brokerLog = '';
  const secrets = { MQTT_ADMIN_PASSWORD: 'admin-pw-test', MQTT_CONTROL_PLANE_PASSWORD: 'cp-pw-test' };
  const bootstrap = (env: Record<string, string>) =>
    run('sh', [path.join(repo, 'deploy/mosquitto/control-plane-client.sh')], {
      env: { ...process.env, MQTT_HOST: '127.0.0.1', MQTT_PORT: String(port), ...env },
      timeout: 60_000,
    });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'dpp-mosquitto-'));
    port = await freePort();
    broker = spawn('sh', [path.join(repo, 'deploy/mosquitto/init.sh')], {
      env: {
        ...process.env,
        MOSQUITTO_CONF: nativeConf(dir, port),
        DYNSEC_FILE: path.join(dir, 'dynamic-security.json'),
        MQTT_ADMIN_PASSWORD: secrets.MQTT_ADMIN_PASSWORD,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    broker.stdout!.on('data', (d: Buffer) => (brokerLog += d.toString()));
    broker.stderr!.on('data', (d: Buffer) => (brokerLog += d.toString()));
    const out = await bootstrap(secrets).catch((err: unknown) => {
      throw new Error(`bootstrap failed: ${String(err)}\nbroker:\n${brokerLog}`);
    });
    expect(out.stdout).toContain('control-plane client ready');
  });
  afterAll(async () => {
    broker?.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('initialises dynamic security once, with the admin from the environment', () => {
    expect(brokerLog).toContain('dynamic security initialised');
    const dynsec = JSON.parse(readFileSync(path.join(dir, 'dynamic-security.json'), 'utf8')) as {
      clients: { username: string }[];
    };
    expect(dynsec.clients.map((c) => c.username).sort()).toEqual(['admin', 'control-plane']);
  });

  it('lets the control plane start with its own login and publish under dpp/; nobody gets in without one', async () => {
    const url = `mqtt://127.0.0.1:${port}`;
    const t = await startTestControlPlane({
      env: { MQTT_URL: `mqtt://control-plane:${secrets.MQTT_CONTROL_PLANE_PASSWORD}@127.0.0.1:${port}` },
    });
    try {
      expect((await t.call('GET', '/readyz')).status).toBe(200);
    } finally {
      await t.close();
    }
    const cp = await mqtt.connectAsync(url, {
      username: 'control-plane',
      password: secrets.MQTT_CONTROL_PLANE_PASSWORD,
      reconnectPeriod: 0,
    });
    try {
      await cp.subscribeAsync('dpp/t-1/#', { qos: 1 });
      const got = new Promise<string>((r) => cp.once('message', (_t, p) => r(p.toString())));
      await cp.publishAsync('dpp/t-1/devices/d-1/work', 'hello', { qos: 1 });
      expect(await got).toBe('hello');
    } finally {
      await cp.endAsync(true);
    }
    expect(await refused(url, {})).toBe(true);
    expect(await refused(url, { username: 'control-plane', password: 'wrong' })).toBe(true);
  });

  it('rotates the control plane password when the bootstrap runs again; the old one stops working', async () => {
    await bootstrap({ ...secrets, MQTT_CONTROL_PLANE_PASSWORD: 'cp-pw-rotated' });
    const url = `mqtt://127.0.0.1:${port}`;
    expect(
      await refused(url, { username: 'control-plane', password: secrets.MQTT_CONTROL_PLANE_PASSWORD }),
    ).toBe(true);
    expect(await refused(url, { username: 'control-plane', password: 'cp-pw-rotated' })).toBe(false);
  });
});
