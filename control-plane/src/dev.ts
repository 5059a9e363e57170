import fs from 'node:fs/promises';
import path from 'node:path';
import { ALL_SCOPES } from '@dpp/shared';
import { ConfigError, loadConfig } from './config/index.js';
import { startDemoFloor, type DemoFloor } from './demo/floor.js';
import { startControlPlane } from './server.js';
import { freePort, portIsFree } from './demo/ports.js';
import type { Store } from './store/index.js';
import { SeedError, applySeed, hashPassword } from './tenants/index.js';

const DEMO_TENANT_ID = '00000000-0000-4000-8000-00000000de00';
const DEMO_EMAIL = 'demo@example.com';

interface DemoCredentials {
  apiKey: string;
  /** A second, read-only key of the workspace: the one the walkthrough rotates and revokes. */
  spareKey?: string;
  email: string;
  password: string;
}

/**
 * Creates (once) a demo workspace with an owner, an all-scopes key and a spare read-only key; remembers
 * them in DATA_DIR. Every start makes both keys active again, so the walkthrough can revoke the spare one
 * and be run again after the next start.
 */
async function ensureDemoTenant(store: Store, dataDir: string): Promise<DemoCredentials> {
  const file = path.join(dataDir, 'demo-credentials.json');
  const saved = await fs
    .readFile(file, 'utf8')
    .then((s) => JSON.parse(s) as DemoCredentials)
    .catch(() => undefined);
  const creds: DemoCredentials = saved ?? {
    apiKey: `dpp_sk_demo_${crypto.randomUUID().replace(/-/g, '')}`,
    email: DEMO_EMAIL,
    password: `demo-${crypto.randomUUID().slice(0, 8)}`,
  };
  const spareKey = creds.spareKey ?? `dpp_sk_demo_${crypto.randomUUID().replace(/-/g, '')}`;
  await applySeed(store.db, {
    tenants: [
      {
        id: DEMO_TENANT_ID,
        name: 'Demo Workspace',
        tier: 'enterprise',
        sandbox: false,
        apiKeys: [
          { secret: creds.apiKey, scopes: [ALL_SCOPES], name: 'demo' },
          { secret: spareKey, scopes: ['products:read'], name: 'spare' },
        ],
      },
    ],
  });
  const owner = await store.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', creds.email)
    .executeTakeFirst();
  if (!owner) {
    await store.db
      .insertInto('users')
      .values({
        id: crypto.randomUUID(),
        tenant_id: DEMO_TENANT_ID,
        email: creds.email,
        password_hash: await hashPassword(creds.password),
        role: 'owner',
        created_at: new Date().toISOString(),
      })
      .execute();
  }
  if (!saved?.spareKey) {
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, JSON.stringify({ ...creds, spareKey }, null, 2) + '\n', { mode: 0o600 });
  }
  return { ...creds, spareKey };
}

/** `npm start`: the control plane in development with a demo workspace, printing what to try. */
async function main(): Promise<void> {
  // Warnings only by default, so the walkthrough below stays readable; LOG_LEVEL=info shows every request.
  const env: Record<string, string | undefined> = {
    DPP_ENV: 'development',
    LOG_LEVEL: 'warn',
    ...process.env,
  };
  // A local Mosquitto often holds 1883 on developer machines: take a free port rather than fail, and the
  // same one on the next start (kept in DATA_DIR), so a print floor left running finds its broker again.
  let mqttNote = '';
  if (env.MQTT_PORT === undefined && !env.MQTT_URL && !(await portIsFree(1883))) {
    const remembered = path.join(env.DATA_DIR ?? './data', 'demo-mqtt-port');
    const last = Number(await fs.readFile(remembered, 'utf8').catch(() => ''));
    env.MQTT_PORT = String(last > 0 && (await portIsFree(last)) ? last : await freePort());
    await fs.mkdir(path.dirname(remembered), { recursive: true });
    await fs.writeFile(remembered, env.MQTT_PORT);
    mqttNote = `  (port 1883 is taken, so the embedded broker is on ${env.MQTT_PORT}; set MQTT_PORT to choose)`;
  }
  const config = loadConfig(env);
  if (config.env === 'production')
    throw new ConfigError('DPP_ENV', 'npm start is for development; use npm run control-plane');
  const cp = await startControlPlane(config);
  const creds = await ensureDemoTenant(cp.store, config.dataDir);
  const base = cp.url.replace('127.0.0.1', 'localhost');
  console.log(
    [
      '',
      'DPP control plane is running (development).',
      `  API          ${base}/api/v2`,
      `  OpenAPI      ${base}/api/v2/openapi.json`,
      `  Sign in      ${base}/signin   (${creds.email} / ${creds.password})`,
      `  Sign up      ${base}/signup`,
      `  Health       ${base}/healthz  ${base}/readyz  ${base}/metrics`,
      `  MQTT         ${cp.services.broker.deviceUrl ?? 'off'}${mqttNote}`,
      '',
      `  Demo API key (all scopes): ${creds.apiKey}`,
      `  Try:  curl -H "Authorization: Bearer ${creds.apiKey}" ${base}/api/v2/api-keys`,
      '',
    ].join('\n'),
  );
  let floor: DemoFloor | undefined;
  const stop = () =>
    void (async () => {
      await floor?.stop();
      await cp.close();
      process.exit(0);
    })();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  if (env.DPP_DEMO_FLOOR === 'off') return;
  console.log('Starting the simulated print floor (set DPP_DEMO_FLOOR=off to skip):');
  try {
    floor = await startDemoFloor({
      controlPlaneUrl: cp.url,
      publicBaseUrl: config.publicBaseUrl,
      apiKey: creds.apiKey,
      dataDir: config.dataDir,
      consolePort: Number(env.DPP_DEMO_CONSOLE_PORT ?? 7878),
      labels: Number(env.DPP_DEMO_LABELS ?? 3),
      log: (line) => console.log(line),
    });
  } catch (err) {
    console.error(`The simulated print floor could not start: ${(err as Error).message}`);
    console.error(
      'The control plane keeps running; see README "Simulated devices" for the requirements (socat).',
    );
    return;
  }
  try {
    await floor.printing;
  } catch (err) {
    console.error(`The demo labels could not be printed: ${(err as Error).message}`);
    console.error('The control plane and the floor keep running; see the logs in DATA_DIR/demo-agent.');
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof SeedError)
    console.error(`configuration error: ${err.message}`);
  else console.error(err);
  process.exit(1);
});
