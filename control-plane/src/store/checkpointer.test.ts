import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { type CheckpointStats, startCheckpointer } from './checkpointer.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(path.join(os.tmpdir(), 'dpp-checkpointer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the checkpointer', () => {
  // The worker is unreferenced while it runs, so it never keeps a process alive by itself; a stop that waited
  // for it unreferenced let a process with nothing else to do exit before the store was closed (the bench of
  // 1.5M rows exited with code 0 and printed nothing while the last connection's close checkpointed its WAL).
  it('keeps a process that has nothing else to do alive until its stop is done', () => {
    const module = pathToFileURL(path.join(here, 'checkpointer.ts')).href;
    const script = `
      const { startCheckpointer } = await import(${JSON.stringify(module)});
      const checkpointer = startCheckpointer(${JSON.stringify(path.join(dir, 'db.sqlite'))}, {
        intervalMs: 10, restartPages: 1000, quiet: (pass) => pass(), onFailure: () => {},
      });
      await checkpointer.stop();
      console.log('stopped');
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('stopped');
    expect(run.status).toBe(0);
  });

  // Under steady writes no write ever finds the WAL wholly checkpointed by the worker's passes alone (each copies
  // what was there when it began, and commits add more meanwhile), so the WAL grew until the writer's own
  // checkpoint ran inside a commit. A quiet pass (nothing written while it runs) lets the next write start it
  // again. Without the writer held (a quiet that runs the pass at once) this WAL grows past 20,000 pages.
  it('starts a WAL that grows under steady writes again from its beginning, in quiet moments', async () => {
    const run = await steadyWrites('restart.sqlite', 5000);
    expect(run.failures).toEqual([]);
    expect(run.quiets).toBeGreaterThan(0);
    // About 1,300 pages on a quiet machine; in a full run on a busy one the worker's passes came late and it reached
    // 7,500 once. Without the writer held it passes 20,000, so this bound still tells the two apart.
    expect(run.walPages).toBeLessThan(15_000);
    // What GET /metrics shows: every quiet moment, the time they held the writer, the WAL at the last pass.
    expect(run.stats.quietMoments).toBe(run.quiets);
    expect(run.stats.quietSeconds).toBeGreaterThan(0);
    expect(run.stats.walPages).toBeLessThan(15_000);
  });

  // A reader's open snapshot (another process's read, a backup) holds every pass back: a quiet moment would not get
  // past it, so the writer is not held for one.
  it('asks for no quiet moment while a reader holds the passes back', async () => {
    const run = await steadyWrites('reader.sqlite', 1000, { reader: true });
    expect(run.failures).toEqual([]);
    expect(run.walPages).toBeGreaterThan(2000);
    expect(run.quiets).toBe(0);
    expect(run.stats).toMatchObject({ quietMoments: 0, quietSeconds: 0 });
    expect(run.stats.walPages).toBeGreaterThan(1000);
  });
});

/**
 * `transactions` writes of five 3,000-byte rows each to a new database `name` while the checkpointer runs (a pass
 * every 5 ms, a quiet moment asked for from 200 pages), the event loop turning between them and none while the
 * writer is held; with `reader`, another connection keeps a read snapshot open from the start. The most pages the
 * WAL held, how many quiet moments were asked for, and what the checkpointer counted.
 */
async function steadyWrites(name: string, transactions: number, opts: { reader?: boolean } = {}) {
  const file = path.join(dir, name);
  const db = new SQLite(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // Only the worker checkpoints.
  db.pragma('wal_autocheckpoint = 0');
  db.exec('create table t (id integer primary key, v blob)');
  const insert = db.prepare('insert into t (v) values (?)');
  const write = db.transaction(() => {
    for (let i = 0; i < 5; i++) insert.run(randomBytes(3000));
  });
  write();
  const reader = opts.reader ? new SQLite(file) : null;
  if (reader) {
    reader.exec('begin');
    reader.prepare('select count(*) from t').get();
  }
  let held: Promise<void> | null = null;
  let quiets = 0;
  const failures: string[] = [];
  const checkpointer = startCheckpointer(file, {
    intervalMs: 5,
    restartPages: 200,
    quiet: async (pass) => {
      quiets += 1;
      let release = () => {};
      held = new Promise((resolve) => (release = resolve));
      try {
        await pass();
      } finally {
        held = null;
        release();
      }
    },
    onFailure: () => failures.push('the checkpointer failed'),
  });
  let walPages = 0;
  let stats: CheckpointStats;
  try {
    for (let i = 0; i < transactions; i++) {
      while (held) await held;
      write();
      walPages = Math.max(walPages, statSync(`${file}-wal`).size / 4096);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // One more pass reported, with nothing written meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 50));
    stats = checkpointer.stats();
  } finally {
    await checkpointer.stop();
    reader?.exec('commit');
    reader?.close();
    db.close();
  }
  return { walPages, quiets, failures, stats };
}
