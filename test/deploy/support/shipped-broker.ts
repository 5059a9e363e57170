/**
 * The Mosquitto configuration the repository ships (deploy/mosquitto/), started on a free port with the
 * machine's Mosquitto: `init.sh` as the broker's entry point, then the control plane's login by
 * `control-plane-client.sh`, as the compose file runs them. Never the broker already on 1883.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '@dpp/testkit';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const PLUGINS = [
  '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so',
  '/usr/lib/mosquitto_dynamic_security.so',
];

export interface ShippedBroker {
  port: number;
  /** mqtt://127.0.0.1:port, without a login. */
  url: string;
  /** MQTT_URL for the control plane: its own login. */
  controlPlaneUrl: string;
  dir: string;
  secrets: { MQTT_ADMIN_PASSWORD: string; MQTT_CONTROL_PLANE_PASSWORD: string };
  log(): string;
  /** Runs control-plane-client.sh again with these secrets (e.g. a rotated password). */
  bootstrap(env: Partial<ShippedBroker['secrets']>): Promise<string>;
  close(): Promise<void>;
}

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

export async function startShippedBroker(): Promise<ShippedBroker> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dpp-mosquitto-'));
  const port = await freePort();
  const secrets = { MQTT_ADMIN_PASSWORD: 'admin-pw-test', MQTT_CONTROL_PLANE_PASSWORD: 'cp-pw-test' };
  let log = '';
  const broker: ChildProcess = spawn('sh', [path.join(repo, 'deploy/mosquitto/init.sh')], {
    env: {
      ...process.env,
      MOSQUITTO_CONF: nativeConf(dir, port),
      DYNSEC_FILE: path.join(dir, 'dynamic-security.json'),
      MQTT_ADMIN_PASSWORD: secrets.MQTT_ADMIN_PASSWORD,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  broker.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  broker.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const bootstrap = async (env: Partial<ShippedBroker['secrets']>) => {
    const out = await run('sh', [path.join(repo, 'deploy/mosquitto/control-plane-client.sh')], {
      env: { ...process.env, MQTT_HOST: '127.0.0.1', MQTT_PORT: String(port), ...secrets, ...env },
      timeout: 60_000,
    }).catch((err: unknown) => {
      throw new Error(`bootstrap failed: ${String(err)}\nbroker:\n${log}`);
    });
    return out.stdout;
  };
  const handle: ShippedBroker = {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    controlPlaneUrl: `mqtt://control-plane:${secrets.MQTT_CONTROL_PLANE_PASSWORD}@127.0.0.1:${port}`,
    dir,
    secrets,
    log: () => log,
    bootstrap,
    close: async () => {
      if (broker.exitCode === null) {
        const exited = new Promise((r) => broker.once('exit', r));
        broker.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await bootstrap({});
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}
