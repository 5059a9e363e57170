/**
 * The peer of the print loop on PostgreSQL: pg-boss, a plain job queue, on the same database in the same
 * run. `workers` concurrent workers fetch one job and complete it (two statements a job, no HTTP, no
 * evidence) until the queue is empty; the figure is jobs completed per second, in a second round on tables that
 * hold the first, analysed.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { analyzeSchema } from './pg-analyze.js';

/** Queues `jobs` jobs, then `workers` workers fetch and complete them until none is left; jobs a second. */
async function round(boss: PgBoss, queue: string, jobs: number, workers: number): Promise<number> {
  for (let i = 0; i < jobs; i += 1000) {
    await boss.insert(
      Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => ({ name: queue, data: { n: i + k } })),
    );
  }
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (;;) {
        const [job] = await boss.fetch(queue);
        if (!job) return;
        await boss.complete(queue, job.id);
        done += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (done !== jobs) throw new Error(`pg-boss completed ${done} of ${jobs}`);
  return done / seconds;
}

export async function pgBossRate(
  databaseUrl: string,
  jobs: number,
  workers: number,
  poolSize: number,
): Promise<number> {
  const schema = `pgboss_${randomBytes(5).toString('hex')}`;
  // The control plane's pool size (DATABASE_POOL_SIZE), so neither side has more connections.
  const boss = new PgBoss({
    connectionString: databaseUrl,
    schema,
    max: poolSize,
    supervise: false,
    schedule: false,
  });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    const queue = 'print';
    await boss.createQueue(queue);
    // As the print loop's floors (aidc.bench.ts, HISTORY_JOBS): measured on tables that hold a round of as many
    // jobs, with statistics taken after it.
    await round(boss, queue, jobs, workers);
    await analyzeSchema(databaseUrl, schema);
    return await round(boss, queue, jobs, workers);
  } finally {
    await boss.stop({ graceful: false, wait: true });
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  }
}
