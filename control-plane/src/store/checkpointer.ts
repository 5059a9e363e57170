/**
 * SQLite's WAL checkpoints off the request path. By default the connection that commits runs a checkpoint
 * whenever the WAL passes 1,000 pages: it copies the pages into the database file and, with
 * `synchronous = NORMAL`, syncs the WAL before and the database file after (two fsyncs), inside whichever
 * request's commit crossed the line, while every other request waits for the one connection. Here a worker
 * thread with its own connection runs a PASSIVE checkpoint every `intervalMs` (it never blocks the writer;
 * https://sqlite.org/wal.html#checkpointing), and the writer keeps a far larger automatic checkpoint only as
 * a safety net should the worker fall behind or stop.
 *
 * A WAL starts again from its beginning only when a write finds every frame of it checkpointed. Under steady
 * writes that never happens by itself: each pass copies what was there when it began, and by its end the next
 * commits have added more. The WAL then grew until the writer's safety net ran a checkpoint inside a commit
 * (30-60 ms with every request waiting, about every second and a half on a busy print floor). So once the WAL
 * holds `restartPages`, has grown since the last pass and no reader held that pass back, the worker asks for a
 * quiet moment (`quiet`: the writer's connection is held, first in line, and nothing is written) and runs one
 * more pass then: it has only the last few commits to copy, it checkpoints the whole WAL, and the next write
 * starts it again. The writer waits for that pass (a few milliseconds) without its thread being blocked, and at
 * most `QUIET_LIMIT_MS`.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The writer's own automatic checkpoint while the worker runs: ~40 MB of WAL with 4 KiB pages. */
export const SAFETY_NET_PAGES = 10_000;

/** How long the writer is held for a quiet pass at most; the pass is harmless if it runs on past it. */
export const QUIET_LIMIT_MS = 100;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 5000');
const pass = () => db.pragma('wal_checkpoint(PASSIVE)')[0];
let lastLog = -1;
let asked = false;
const timer = setInterval(() => {
  if (asked) return;
  try {
    const { busy, log, checkpointed } = pass();
    parentPort.postMessage({ kind: 'pass', log });
    // Grown since the last pass: a writer is at work, and no write will find the WAL wholly checkpointed. A pass
    // that stopped short of what it saw was held back by a reader (another process's open read, a backup): a
    // quiet moment would not get past it either.
    if (busy === 0 && log >= workerData.restartPages && log !== lastLog && checkpointed === log) {
      asked = true;
      parentPort.postMessage({ kind: 'quiet' });
    }
    lastLog = log;
  } catch (err) {
    parentPort.postMessage({ kind: 'error', message: String(err && err.message) });
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message === 'pass') {
    try {
      pass();
    } catch (err) {
      parentPort.postMessage({ kind: 'error', message: String(err && err.message) });
    }
    asked = false;
    parentPort.postMessage({ kind: 'passed' });
    return;
  }
  clearInterval(timer);
  db.close();
  process.exit(0);
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
  /** What the checkpointer saw since it started (GET /metrics shows it). */
  stats(): CheckpointStats;
}

export interface CheckpointStats {
  /** Pages in the WAL at the worker's last pass: it falls back once the WAL starts again. */
  walPages: number;
  /** Quiet moments the writer was held for, and how long they held it in all. */
  quietMoments: number;
  quietSeconds: number;
}

export interface CheckpointerOptions {
  /** How often the worker runs a PASSIVE checkpoint. */
  intervalMs: number;
  /** WAL pages from which a growing WAL is checkpointed in a quiet moment, so that it starts again. */
  restartPages: number;
  /**
   * Runs `pass` while nothing is written to the database (the writer's connection held); `pass` resolves once
   * the worker's pass is done or after {@link QUIET_LIMIT_MS}.
   */
  quiet(pass: () => Promise<void>): Promise<void>;
  /** Runs once if the worker fails (the caller then gives the writer its default automatic checkpoint back). */
  onFailure(): void;
}

type FromWorker =
  { kind: 'pass'; log: number } | { kind: 'quiet' } | { kind: 'passed' } | { kind: 'error'; message: string };

/** Starts the checkpointing worker for the database `file`. */
export function startCheckpointer(file: string, options: CheckpointerOptions): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const { intervalMs, restartPages } = options;
  const worker = new Worker(WORKER, { eval: true, workerData: { file, intervalMs, restartPages, driver } });
  // It never keeps the process alive by itself while it runs.
  worker.unref();
  let failed = false;
  const fail = () => {
    if (failed) return;
    failed = true;
    options.onFailure();
  };
  let exited = false;
  /** Ends the quiet moment in progress, if any. */
  let endQuiet: (() => void) | null = null;
  const stats: CheckpointStats = { walPages: 0, quietMoments: 0, quietSeconds: 0 };
  const quietPass = () =>
    new Promise<void>((resolve) => {
      if (exited) return resolve();
      const since = performance.now();
      const limit = setTimeout(done, QUIET_LIMIT_MS);
      function done() {
        clearTimeout(limit);
        endQuiet = null;
        stats.quietMoments += 1;
        stats.quietSeconds += (performance.now() - since) / 1000;
        resolve();
      }
      endQuiet = done;
      worker.postMessage('pass');
    });
  worker.on('error', fail);
  worker.on('message', (message: FromWorker) => {
    if (message.kind === 'pass') stats.walPages = Math.max(0, message.log);
    else if (message.kind === 'quiet') void options.quiet(quietPass).catch(fail);
    else if (message.kind === 'passed') endQuiet?.();
    else fail();
  });
  const gone = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      endQuiet?.();
      resolve();
    }),
  );
  return {
    stats: () => ({ ...stats }),
    stop: async () => {
      if (exited) return;
      // Referenced from here on: the worker's close (a checkpoint of all of the WAL, seconds for a large one)
      // is what a closing store waits for, and an unreferenced worker let a process with nothing else to do
      // exit in the middle of it.
      worker.ref();
      worker.postMessage('stop');
      await gone;
    },
  };
}
