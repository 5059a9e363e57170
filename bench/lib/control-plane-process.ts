/**
 * A control plane in its own process, so a benchmark can read that process's memory alone. Started by
 * `startControlPlaneProcess`; prints one JSON line `{ url, tenantId, key }` once it listens and stops
 * on SIGTERM. Argument: `sqlite` (default) or `postgres` (TEST_DATABASE_URL).
 */
import { startTestControlPlane } from '@dpp/testkit';

const dialect = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite';
const t = await startTestControlPlane({
  dialect,
  env: { RATE_LIMITS: 'mid_market=1000000000/60', PUBLIC_BASE_URL: 'https://id.example.com' },
});
process.stdout.write(`${JSON.stringify({ url: t.url, tenantId: t.tenants.a.id, key: t.tenants.a.admin })}\n`);
process.once('SIGTERM', () => {
  void t.close().then(() => process.exit(0));
});
