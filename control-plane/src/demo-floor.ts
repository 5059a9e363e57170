/**
 * `npm run demo-floor`: the simulated print floor of `npm start` (firmware-sim and one enrolled agent), run
 * against control planes that are already up: the compose file's `demo-floor` service. It writes the demo
 * workspace into the database the replicas share (as `npm start` does into its own), then enrolls the agent
 * and prints DPP_DEMO_LABELS labels through CONTROL_PLANE_URL (the reverse proxy, so requests land on every
 * replica), reports each job until it is SEALED, and keeps the floor running until it is stopped.
 *
 * A demo: it creates a workspace with an all-scopes API key. Leave the service out of a production
 * deployment (docs/operations.md, "The compose deployment").
 */
import { ConfigError } from './config/index.js';
import { startDemoFloor, type DemoFloor } from './demo/floor.js';
import { ensureDemoTenant } from './demo/tenant.js';
import { openStore } from './store/index.js';

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new ConfigError(name, 'is required by the demo floor');
  return v;
}

async function main(): Promise<void> {
  const databaseUrl = required('DATABASE_URL');
  const controlPlaneUrl = required('CONTROL_PLANE_URL').replace(/\/+$/, '');
  const dataDir = process.env.DATA_DIR || './data';
  const labels = Number(process.env.DPP_DEMO_LABELS ?? 3);
  if (!Number.isInteger(labels) || labels < 1 || labels > 100)
    throw new ConfigError('DPP_DEMO_LABELS', 'must be a whole number from 1 to 100');

  const store = await openStore({ databaseUrl });
  const creds = await ensureDemoTenant(store, dataDir).finally(() => store.close());
  console.log(
    [
      '',
      `Demo workspace: sign in at ${process.env.PUBLIC_BASE_URL ?? controlPlaneUrl}/signin (${creds.email} / ${creds.password})`,
      `Demo API key (all scopes): ${creds.apiKey}`,
      '',
      `Starting the simulated print floor against ${controlPlaneUrl}:`,
    ].join('\n'),
  );
  const floor: DemoFloor = await startDemoFloor({
    controlPlaneUrl,
    publicBaseUrl: process.env.PUBLIC_BASE_URL ?? controlPlaneUrl,
    apiKey: creds.apiKey,
    dataDir,
    consolePort: Number(process.env.DPP_DEMO_CONSOLE_PORT ?? 7878),
    labels,
    log: (line) => console.log(line),
  });
  const stop = () =>
    void floor.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // The simulator and the agent are processes of their own: this one stays to watch them (and to stop them
  // with it), and ends when one of them has, so that whoever runs it (compose) can start the floor again.
  const watch = setInterval(() => {
    if (floor.running()) return;
    clearInterval(watch);
    console.error('The simulator or the agent stopped; see DATA_DIR/demo-agent/*.log');
    void floor.stop().finally(() => process.exit(1));
  }, 2_000);
  const { sealed, total } = await floor.printing;
  console.log(
    `${sealed} of ${total} demo labels SEALED; the floor keeps running (queue more jobs with the API key above).`,
  );
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) console.error(`configuration error: ${err.message}`);
  else console.error(err);
  process.exit(1);
});
