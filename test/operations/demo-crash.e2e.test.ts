/**
 * The crash drill of `npm start` (SQLite, and PostgreSQL when TEST_DATABASE_URL is set), run from outside the
 * code as an operator would: the demo floor prints 100 labels, the control plane is killed with SIGKILL
 * mid-run and started again on the same data. The simulator and the agent outlive it (as separate machines
 * would), the new start adopts them, and every job ends SEALED (or in the re-print file): no label printed
 * twice, none sealed twice. A graceful stop then stops the floor too.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, testDialects } from '@dpp/testkit';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const LABELS = 100;

interface Started {
  child: ChildProcess;
  output: () => string;
}

function startDev(env: Record<string, string>): Started {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'control-plane/src/dev.ts')], {
    cwd: repo,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

/** Polls `fn` until it answers non-null; a timeout names what it waited for and ends with the process's output. */
async function until<T>(
  what: string,
  fn: () => Promise<T | null> | T | null,
  timeoutMs: number,
  output: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== null) return v;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}; the control plane's output ends:\n${output().slice(-4000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The simulator's `labelPrinted` lines: what physically came out. */
async function labelsOut(dataDir: string): Promise<{ content: string; void: boolean }[]> {
  const text = await readFile(path.join(dataDir, 'demo-agent', 'sim.log'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.startsWith('{"event":"labelPrinted"'))
    .map((l) => JSON.parse(l) as { content: string; void: boolean });
}

/** A schema of its own in the test database, as `DATABASE_URL` (node-postgres reads `options`). */
async function pgSchemaUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  const base = process.env.TEST_DATABASE_URL!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(sql);
    await c.end();
  };
  await run(`create schema ${schema}`);
  const url = `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return { url, drop: () => run(`drop schema if exists ${schema} cascade`) };
}

describe.each(testDialects())('npm start on %s: the control plane killed mid-run', (dialect) => {
  const running: Started[] = [];
  let dataDir = '';
  let floorPids: number[] = [];
  let dropSchema: (() => Promise<void>) | null = null;
  afterAll(async () => {
    for (const s of running) s.child.kill('SIGKILL');
    for (const pid of floorPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await dropSchema?.();
  });

  it(
    'leaves the floor printing; the next start adopts it; every label out once, sealed once',
    { timeout: 300_000 },
    async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'dpp-demo-crash-'));
      const database: Record<string, string> = {};
      if (dialect === 'postgres') {
        const schema = await pgSchemaUrl();
        dropSchema = schema.drop;
        database.DATABASE_URL = schema.url;
      }
      const env = {
        ...database,
        PORT: String(await freePort()),
        MQTT_PORT: String(await freePort()),
        DATA_DIR: dataDir,
        DPP_DEMO_CONSOLE_PORT: String(await freePort()),
        DPP_DEMO_LABELS: String(LABELS),
        DPP_ENV: 'development',
        LOG_LEVEL: 'warn',
      };
      const first = startDev(env);
      running.push(first);
      const apiKey = await until(
        'the demo API key',
        () => /Demo API key \(all scopes\): (\S+)/.exec(first.output())?.[1] ?? null,
        120_000, // a cold start compiles the control plane with tsx; on a busy 2-core runner that is slow
        first.output,
      );
      // Mid-run: a fifth of the labels are out.
      await until(
        'labels coming out',
        async () => ((await labelsOut(dataDir)).length >= LABELS / 5 ? true : null),
        120_000,
        first.output,
      );
      first.child.kill('SIGKILL');
      await exited(first.child);

      const record = JSON.parse(await readFile(path.join(dataDir, 'demo-agent', 'floor.json'), 'utf8')) as {
        simPid: number;
        agentPid: number;
      };
      floorPids = [record.simPid, record.agentPid];
      expect(floorPids.map(alive)).toEqual([true, true]); // the floor outlived the control plane

      const second = startDev({ ...env, DPP_DEMO_LABELS: '5' });
      running.push(second);
      await until(
        'the floor adopted',
        () => (/adopted/.test(second.output()) ? true : null),
        120_000,
        second.output,
      );
      const base = `http://127.0.0.1:${env.PORT}`;
      const jobs = async () => {
        const out: { jobRef: string; serial: string; gtin: string; state: string; attemptCount: number }[] =
          [];
        let cursor: string | null = null;
        do {
          const r = await fetch(`${base}/api/v2/aidc/jobs?limit=200${cursor ? `&cursor=${cursor}` : ''}`, {
            headers: { authorization: `Bearer ${apiKey}` },
          });
          const body = (await r.json()) as { data: typeof out; hasMore: boolean; nextCursor: string };
          out.push(...body.data);
          cursor = body.hasMore ? body.nextCursor : null;
        } while (cursor);
        return out;
      };
      const finished = await until(
        'every job finished',
        async () => {
          const all = await jobs();
          return all.length === LABELS + 5 && all.every((j) => ['SEALED', 'DEAD_LETTER'].includes(j.state))
            ? all
            : null;
        },
        180_000,
      );

      // What came out: each Digital Link at most once among good labels, and every sealed job's label is there.
      const out = await labelsOut(dataDir);
      const good = new Map<string, number>();
      for (const l of out.filter((l) => !l.void)) good.set(l.content, (good.get(l.content) ?? 0) + 1);
      expect([...good.entries()].filter(([, n]) => n > 1)).toEqual([]);
      const sealed = finished.filter((j) => j.state === 'SEALED');
      expect(sealed.length).toBe(LABELS + 5);
      const paths = new Set([...good.keys()].map((c) => new URL(c).pathname));
      expect(sealed.filter((j) => !paths.has(`/01/${j.gtin}/21/${j.serial}`))).toEqual([]);

      // A graceful stop stops the floor with it.
      second.child.kill('SIGTERM');
      await exited(second.child);
      await until('the floor stopped', () => (floorPids.every((p) => !alive(p)) ? true : null), 15_000);
    },
  );
});
