import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { computeGs1CheckDigit } from '@dpp/shared';
import type { BenchRow } from './lib/table.js';

/** POST /products/batch: calls of 1,000 items each (the spec's maximum), one after the other. */
const BATCH_CALLS = 20;
const BATCH_ITEMS = 1000;
const INGEST_ROWS = 100_000;
const SMALL_INGEST_ROWS = 10_000;
/** Products per second on SQLite on a 2-core machine, each with version 1, an event and an outbox row. */
const TARGET_BATCH_PER_SECOND = 2_000;
const TARGET_INGEST_PER_SECOND = 2_000;
/**
 * Flat memory. Peak RSS of the server during a 100,000-row import at most this far above its RSS before
 * (V8 lets garbage pile up to about a hundred MB before a full collection; a file held in memory would
 * add its 15 MB of text plus hundreds of MB of row objects)...
 */
const TARGET_RSS_GROWTH_MB = 160;
/** ...growing by at most twice what a 10,000-row import takes, plus 32 MB... */
const TARGET_FLATNESS = 2;
/** ...and, after a full collection, retaining at most this much more heap than before the import. */
const TARGET_RETAINED_MB = 16;

const MB = 1024 * 1024;

function gtin(n: number): string {
  const body = `95${String(n).padStart(10, '0')}`;
  return `${body}${computeGs1CheckDigit(body)}`;
}

const EXTENSIONS = {
  energyEfficiencyClass: 'B',
  annualEnergyConsumptionKwh: 120,
  repairabilityScore: 7.5,
  weeeCategory: 'small_it_telecom',
  recycledContentPercentage: 35,
};

function item(n: number) {
  return {
    name: `Bench product ${n}`,
    description: `Benchmark product number ${n}, electronics`,
    category: 'electronics',
    gtin: gtin(n),
    serialNumber: String(n),
    extensions: EXTENSIONS,
  };
}

const CSV_HEADER =
  'name,description,category,gtin,serialNumber,energyEfficiencyClass,annualEnergyConsumptionKwh,' +
  'repairabilityScore,weeeCategory,recycledContentPercentage,hazardousSubstances\r\n';

/** The CSV upload, generated as it is sent (the client holds 1,000 rows at a time). */
function csvStream(first: number, rows: number): Readable {
  return Readable.from(
    (function* () {
      yield CSV_HEADER;
      for (let start = 0; start < rows; start += 1000) {
        let chunk = '';
        for (let i = start; i < Math.min(rows, start + 1000); i++) {
          const n = first + i;
          chunk += `Bench product ${n},"Benchmark product number ${n}, electronics",electronics,${gtin(n)},${n},B,120,7.5,small_it_telecom,35,lead|cadmium\r\n`;
        }
        yield chunk;
      }
    })(),
  );
}

interface Server {
  url: string;
  key: string;
  child: ChildProcess;
  ask<T>(type: string): Promise<T>;
}

async function startServer(): Promise<Server> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const child = fork(path.join(here, 'lib', 'control-plane-child.ts'), [], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type: string }) => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        resolve(m as T);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`control plane exited ${code}`)));
    });
  const ready = await next<{ url: string; key: string }>('ready');
  return {
    url: ready.url,
    key: ready.key,
    child,
    ask: <T>(type: string) => {
      const answer = next<T>(type);
      child.send({ type });
      return answer;
    },
  };
}

async function stopServer(s: Server): Promise<void> {
  s.child.send({ type: 'stop' });
  await new Promise((r) => s.child.once('exit', r));
}

async function withServer<T>(work: (s: Server) => Promise<T>): Promise<T> {
  const s = await startServer();
  try {
    return await work(s);
  } finally {
    await stopServer(s);
  }
}

async function postJson(
  s: Server,
  p: string,
  body: string,
): Promise<{ status: number; json: { created?: number } }> {
  const res = await fetch(s.url + p, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: (await res.json()) as { created?: number } };
}

/** Streams an upload with chunked transfer encoding and returns the 202 answer. */
function upload(s: Server, body: Readable): Promise<{ status: number; statusUrl: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${s.url}/api/v2/ingest/products`,
      { method: 'POST', headers: { authorization: `Bearer ${s.key}`, 'content-type': 'text/csv' } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          const json = JSON.parse(text) as { data?: { statusUrl: string } };
          resolve({ status: res.statusCode ?? 0, statusUrl: json.data?.statusUrl ?? '' });
        });
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
}

async function batchRate(s: Server): Promise<number> {
  const bodies = Array.from({ length: BATCH_CALLS + 1 }, (_, c) =>
    JSON.stringify({
      items: Array.from({ length: BATCH_ITEMS }, (_, i) => item(1_000_000 + c * BATCH_ITEMS + i)),
    }),
  );
  const warm = await postJson(s, '/api/v2/products/batch', bodies[0]!);
  if (warm.status !== 200 || warm.json.created !== BATCH_ITEMS)
    throw new Error(`batch answered ${warm.status}`);
  const start = performance.now();
  for (const body of bodies.slice(1)) {
    const r = await postJson(s, '/api/v2/products/batch', body);
    if (r.status !== 200 || r.json.created !== BATCH_ITEMS)
      throw new Error(`batch created ${r.json.created}`);
  }
  return (BATCH_CALLS * BATCH_ITEMS) / ((performance.now() - start) / 1000);
}

interface IngestFigures {
  rowsPerSecond: number;
  uploadSeconds: number;
  baselineMb: number;
  peakMb: number;
  growthMb: number;
  retainedMb: number;
}

async function jobStatus(
  s: Server,
  statusUrl: string,
): Promise<{ status: string; createdRows: number; failedRows: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(s.url + statusUrl, { headers: { authorization: `Bearer ${s.key}` } });
      return ((await res.json()) as { data: { status: string; createdRows: number; failedRows: number } })
        .data;
    } catch (err) {
      // A keep-alive connection the server closed just as it was reused (ECONNRESET): ask again.
      if (attempt >= 3) throw err;
    }
  }
}

async function ingest(s: Server, first: number, rows: number): Promise<IngestFigures> {
  const before = await s.ask<{ rss: number; heapUsed: number }>('reset');
  const start = performance.now();
  const accepted = await upload(s, csvStream(first, rows));
  if (accepted.status !== 202) throw new Error(`ingest answered ${accepted.status}`);
  const uploadSeconds = (performance.now() - start) / 1000;
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const job = await jobStatus(s, accepted.statusUrl);
    if (job.status === 'completed' || job.status === 'failed') {
      if (job.createdRows !== rows)
        throw new Error(`ingest ${job.status}: ${job.createdRows} created, ${job.failedRows} failed`);
      break;
    }
  }
  const seconds = (performance.now() - start) / 1000;
  const after = await s.ask<{ peak: number; heapUsed: number }>('peak');
  return {
    rowsPerSecond: rows / seconds,
    uploadSeconds,
    baselineMb: before.rss / MB,
    peakMb: after.peak / MB,
    growthMb: (after.peak - before.rss) / MB,
    retainedMb: (after.heapUsed - before.heapUsed) / MB,
  };
}

/**
 * Products created per second through POST /products/batch (1,000 items a call) and through a
 * 100,000-row CSV ingest (upload to completed), and the control plane's memory during that import,
 * measured in its own process (SQLite): peak RSS, its growth next to a 10,000-row import, and the heap
 * retained afterwards. Every product is a full create: validation, version 1, a product.created event
 * and its outbox row (which the outbox dispatcher drains meanwhile, as in production).
 */
export async function run(): Promise<BenchRow[]> {
  // Each part on a fresh server: the batches must not share the imports' outbox backlog, and the
  // imports' memory is read on a heap the batches have not grown.
  const batch = await withServer(batchRate);
  const s = await startServer();
  try {
    const small = await ingest(s, 2_000_000, SMALL_INGEST_ROWS);
    const big = await ingest(s, 3_000_000, INGEST_ROWS);
    const flatLimit = TARGET_FLATNESS * Math.max(0, small.growthMb) + 32;
    const rows = INGEST_ROWS.toLocaleString('en-US');
    const smallRows = SMALL_INGEST_ROWS.toLocaleString('en-US');
    return [
      {
        work: `POST /products/batch, ${BATCH_CALLS} calls of ${BATCH_ITEMS} (SQLite)`,
        figure: batch,
        unit: 'products/s',
        target: `>= ${TARGET_BATCH_PER_SECOND} products/s`,
        met: batch >= TARGET_BATCH_PER_SECOND,
      },
      {
        work: `POST /ingest/products, ${rows}-row CSV, upload to completed`,
        figure: big.rowsPerSecond,
        unit: 'products/s',
        peer: { label: `${smallRows}-row import`, figure: small.rowsPerSecond },
        ratio: big.rowsPerSecond / small.rowsPerSecond,
        target: `>= ${TARGET_INGEST_PER_SECOND} products/s`,
        met: big.rowsPerSecond >= TARGET_INGEST_PER_SECOND,
      },
      {
        work: `  upload of the ${rows} rows (14.8 MB) until 202`,
        figure: big.uploadSeconds,
        unit: 's',
        target: 'reported',
        met: true,
      },
      {
        work: `  server peak RSS during the ${rows}-row import`,
        figure: big.peakMb,
        unit: 'MB',
        peer: { label: 'RSS before the import', figure: big.baselineMb },
        ratio: big.peakMb / big.baselineMb,
        target: `<= before + ${TARGET_RSS_GROWTH_MB} MB`,
        met: big.growthMb <= TARGET_RSS_GROWTH_MB,
      },
      {
        work: `  peak RSS growth, ${rows} rows vs ${smallRows}`,
        figure: big.growthMb,
        unit: 'MB',
        peer: { label: `${smallRows} rows`, figure: small.growthMb },
        target: `<= ${TARGET_FLATNESS} x the ${smallRows}-row growth + 32 MB`,
        met: big.growthMb <= flatLimit,
      },
      {
        work: `  heap retained after the ${rows}-row import (after GC)`,
        figure: big.retainedMb,
        unit: 'MB',
        peer: { label: `${smallRows} rows`, figure: small.retainedMb },
        target: `<= ${TARGET_RETAINED_MB} MB`,
        met: big.retainedMb <= TARGET_RETAINED_MB,
      },
    ];
  } finally {
    await stopServer(s);
  }
}
