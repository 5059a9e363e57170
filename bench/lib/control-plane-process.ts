/**
 * A control plane in its own process, so a benchmark can read that process's memory alone, or run several
 * replicas side by side. Started by `startControlPlaneProcess`; prints one JSON line
 * `{ url, tenantId, key, databaseUrl }` once it listens and stops on SIGTERM. Arguments: `sqlite`
 * (default) or `postgres` (TEST_DATABASE_URL, a fresh schema, seeded), or `join <DATABASE_URL>`: another
 * replica on that database (no seed; `tenantId` and `key` are null). `BENCH_MQTT_URL` puts it on that
 * external broker instead of none; `DATABASE_POOL_SIZE` is passed on.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, startControlPlane } from '@dpp/control-plane';
import { freePort, startTestControlPlane } from '@dpp/testkit';

const env = {
  RATE_LIMITS: 'mid_market=1000000000/60',
  PUBLIC_BASE_URL: 'https://id.example.com',
  ...(process.env.BENCH_MQTT_URL ? { MQTT_URL: process.env.BENCH_MQTT_URL } : {}),
  // As the benchmark chose it (startControlPlaneProcess's poolSize; docs/configuration.md).
  ...(process.env.DATABASE_POOL_SIZE ? { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE } : {}),
};

if (process.argv[2] === 'join') {
  const cp = await startControlPlane(
    loadConfig({
      ...env,
      DPP_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      MQTT_PORT: '0',
      DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'dpp-replica-')),
      DATABASE_URL: process.argv[3]!,
      LOG_LEVEL: 'silent',
      IP_RATE_LIMITS: process.env.IP_RATE_LIMITS ?? 'public=1000000000/60',
    }),
  );
  process.stdout.write(`${JSON.stringify({ url: cp.url, tenantId: null, key: null, databaseUrl: null })}\n`);
  process.once('SIGTERM', () => {
    void cp.close().then(() => process.exit(0));
  });
} else {
  const dialect = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
  const t = await startTestControlPlane({ dialect, env });
  process.stdout.write(
    `${JSON.stringify({ url: t.url, tenantId: t.tenants.a.id, key: t.tenants.a.admin, databaseUrl: t.databaseUrl })}\n`,
  );
  process.once('SIGTERM', () => {
    void t.close().then(() => process.exit(0));
  });
}
