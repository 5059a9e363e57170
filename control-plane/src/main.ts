import { ConfigError, loadConfig } from './config/index.js';
import { startControlPlane } from './server.js';
import { SeedError } from './tenants/index.js';

/** `npm run control-plane`: the control plane alone, configured from the environment. */
async function main(): Promise<void> {
  const config = loadConfig();
  const cp = await startControlPlane(config);
  const stop = (signal: string) => {
    cp.log.info({ signal }, 'shutting down');
    cp.close().then(
      () => process.exit(0),
      (err) => {
        cp.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError || err instanceof SeedError) {
    console.error(`configuration error: ${err.message}`);
  } else {
    console.error(err);
  }
  process.exit(1);
});
