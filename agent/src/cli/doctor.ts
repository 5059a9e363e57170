/**
 * `dpp-agent doctor`: checks, in order, everything the agent needs, and says what to do about each
 * failure: the configuration, the data folder, the key file and its mode, the enrollment, the control
 * plane, a token, the JWKS, the broker, each printer and scanner, the outbox. Exit code 1 if any failed.
 */
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import path from 'node:path';
import mqtt from 'mqtt';
import { ControlPlaneClient, joinUrl } from '../api/index.js';
import type { LoadedConfig } from '../config/index.js';
import { remoteJwks } from '../envelope/index.js';
import { toAgentError } from '../errors.js';
import {
  TokenClient,
  checkKeyFileMode,
  keyFilePath,
  loadKeyFile,
  readIdentity,
  type DeviceKey,
  type Identity,
} from '../identity/index.js';
import { silentLogger } from '../log.js';
import { countByState } from '../outbox/index.js';
import { createPrinterDriver, printerStateOf } from '../printers/index.js';
import { DATABASE_FILE, openAgentDatabase } from '../store/index.js';
import { createLink } from '../transports/index.js';
import { fetchStatus } from './console-client.js';
import type { Output } from './output.js';

type Verdict = 'ok' | 'warn' | 'FAIL' | 'skip';

export async function doctorCommand(loaded: LoadedConfig, out: Output): Promise<number> {
  const { config } = loaded;
  let failures = 0;
  const report = (verdict: Verdict, check: string, detail: string) => {
    if (verdict === 'FAIL') failures++;
    out.line(`${verdict.padEnd(5)} ${check.padEnd(22)} ${detail}`);
  };
  const attempt = async (check: string, fn: () => Promise<string>, fix?: string): Promise<boolean> => {
    try {
      report('ok', check, await fn());
      return true;
    } catch (err) {
      report('FAIL', check, `${toAgentError(err).message}${fix ? ` -> ${fix}` : ''}`);
      return false;
    }
  };

  report(
    'ok',
    'config',
    loaded.file
      ? `${loaded.file} (${config.printers.length} printer(s))`
      : 'no file; defaults and environment',
  );
  await attempt('data folder', async () => {
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    await access(config.dataDir, constants.W_OK);
    return config.dataDir;
  });

  let key: DeviceKey | null = null;
  const keyFile = keyFilePath(config.dataDir);
  await attempt(
    'key file',
    async () => {
      const mode = await checkKeyFileMode(keyFile);
      key = await loadKeyFile(keyFile);
      return `${keyFile} mode ${mode.toString(8)}, Ed25519 ${key.kid.slice(0, 12)}...`;
    },
    'dpp-agent enroll --url ... --token ...',
  );
  let identity: Identity | null = null;
  await attempt('enrollment', async () => {
    identity = await readIdentity(config.dataDir);
    if (key && key.kid !== identity.keyThumbprint)
      throw new Error('identity.json names another key than the key file');
    return `device ${identity.name} (${identity.deviceId}), tenant ${identity.tenantId}`;
  });
  if (!identity || !key) {
    report('skip', 'control plane', 'not enrolled');
    return finish();
  }
  const id: Identity = identity;
  const baseUrl = config.controlPlaneUrl ?? id.controlPlaneUrl;
  const tokens = new TokenClient({
    identity: id,
    key,
    baseUrl,
    timeoutMs: config.http.timeoutMs,
    log: silentLogger,
  });
  const client = new ControlPlaneClient({ baseUrl, tokens, timeoutMs: config.http.timeoutMs });
  const up = await attempt(
    'control plane',
    async () => {
      if (!(await client.health())) throw new Error(`${baseUrl}/healthz is not healthy`);
      return baseUrl;
    },
    'check the URL (DPP_AGENT_URL) and the network',
  );
  let token: string | null = null;
  if (up) {
    await attempt(
      'access token',
      async () => {
        token = await tokens.token();
        return 'obtained with the device key (private_key_jwt)';
      },
      'a revoked device must enroll again with a new token',
    );
    await attempt('jwks', async () => {
      const jwks = remoteJwks({
        url: joinUrl(baseUrl, '/.well-known/jwks.json'),
        timeoutMs: config.http.timeoutMs,
      });
      await jwks.reload();
      return `${jwks.jwks()?.keys.length ?? 0} key(s) at ${joinUrl(baseUrl, '/.well-known/jwks.json')}`;
    });
  }
  const mqttUrl = config.mqttEnabled ? (config.mqttUrl ?? id.mqtt.url) : null;
  if (!mqttUrl) report('skip', 'broker', 'MQTT off or none given at enrollment: the agent polls');
  else if (!token) report('skip', 'broker', 'no token');
  else {
    const password: string = token;
    await attempt(
      'broker',
      async () => {
        const c = await mqtt.connectAsync(mqttUrl, {
          username: id.deviceId,
          password,
          reconnectPeriod: 0,
          connectTimeout: 5000,
        });
        await c.endAsync();
        return mqttUrl;
      },
      'without the broker the agent still works, polling every poll.intervalMs',
    );
  }

  const running = await fetchStatus(config);
  report(
    running ? 'ok' : 'warn',
    'agent',
    running ? `running, console on port ${config.console.port}` : 'not running (or its console is off)',
  );
  for (const p of config.printers) {
    const view = running?.printers.find((v) => v.name === p.name);
    if (view) {
      report(
        view.state === 'offline' || view.state === 'error'
          ? 'FAIL'
          : view.state === 'ready' || view.state === 'printing'
            ? 'ok'
            : 'warn',
        `printer ${p.name}`,
        `${view.state}${view.detail ? ` (${view.detail})` : ''}, from the running agent`,
      );
    } else {
      await attempt(
        `printer ${p.name}`,
        async () => {
          if (p.transport.type === 'spool') {
            await mkdir(p.transport.dir, { recursive: true });
            await access(p.transport.dir, constants.W_OK);
            return `spool folder ${p.transport.dir} writable`;
          }
          if (p.transport.type === 'cups') {
            await access(await which(p.transport.command), constants.X_OK);
            return `${p.transport.command} found; queue ${p.transport.queue} (CUPS reports no paper status)`;
          }
          const driver = createPrinterDriver(p);
          try {
            const s = await driver.status();
            return s ? `${printerStateOf(s)}${s.ready ? '' : ` (${s.errors.join(', ')})`}` : 'no status';
          } finally {
            await driver.close();
          }
        },
        'check the cable, the path or address, the baud rate',
      );
    }
    if (p.scanner) {
      if (running) report('skip', `scanner ${p.name}`, 'in use by the running agent');
      else
        await attempt(`scanner ${p.name}`, async () => {
          const link = createLink(p.scanner!.link);
          await link.open();
          await link.close();
          return `${link.target} opens`;
        });
    }
  }
  await attempt('outbox', async () => {
    const db = openAgentDatabase(path.join(config.dataDir, DATABASE_FILE));
    try {
      const c = countByState(db);
      if (c.pending > 0 && !up) throw new Error(`${c.pending} result(s) waiting for the control plane`);
      return `${c.pending} pending, ${c.delivered} delivered, ${c.rejected} refused`;
    } finally {
      db.close();
    }
  });
  return finish();

  function finish(): number {
    out.line(failures === 0 ? 'all checks passed' : `${failures} check(s) failed`);
    return failures === 0 ? 0 : 1;
  }
}

async function which(command: string): Promise<string> {
  if (command.includes('/')) return command;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error(`${command} is not on the PATH (install cups-client)`);
}
