import fs from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, loadConfig } from './config/index.js';
import { startDemoFloor, type DemoFloor } from './demo/floor.js';
import { startControlPlane } from './server.js';
import { freePort, portIsFree } from './demo/ports.js';
import { ensureDemoTenant } from './demo/tenant.js';
import { SeedError } from './tenants/index.js';

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
