/**
 * SQLite's WAL checkpoints off the request path. By default the connection that commits runs a checkpoint
 * whenever the WAL passes 1,000 pages: it copies the pages into the database file and, with
 * `synchronous = NORMAL`, syncs the WAL before and the database file after (two fsyncs), inside whichever
 * request's commit crossed the line, while every other request waits for the one connection. Here a worker
 * thread with its own connection runs a PASSIVE checkpoint every `intervalMs` (it never blocks the writer;
 * https://sqlite.org/wal.html#checkpointing), and the writer keeps a far larger automatic checkpoint only as
 * a safety net should the worker fall behind or stop.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The writer's own automatic checkpoint while the worker runs: ~40 MB of WAL with 4 KiB pages. */
export const SAFETY_NET_PAGES = 10_000;

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ error: String(err && err.message) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  process.exit(0);
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

/**
 * Starts the checkpointing worker for the database `file`. `onFailure` runs once if the worker fails (the
 * caller then gives the writer its default automatic checkpoint back).
 */
export function startCheckpointer(file: string, intervalMs: number, onFailure: () => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { file, intervalMs, driver } });
  // It never keeps the process alive by itself while it runs.
  worker.unref();
  let failed = false;
  const fail = () => {
    if (failed) return;
    failed = true;
    onFailure();
  };
  worker.on('error', fail);
  worker.on('message', fail);
  let exited = false;
  const gone = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  return {
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
