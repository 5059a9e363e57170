import { performance } from 'node:perf_hooks';
import { computeGs1CheckDigit, encodeSgtin96 } from '@dpp/shared';
import tds from 'epc-tds';
import { startControlPlaneProcess, type ControlPlaneProcess } from './lib/child-process.js';
import type { BenchRow } from './lib/table.js';
import { demoProductBody } from '@dpp/control-plane';

const BATCH = 10_000;
const EXPORT_ROWS = 1_000_000;
const SMALL_EXPORT_ROWS = 100_000;
const REPORT = 1_000;
const REPORTS = 50;
const CODEC_INPUTS = 50_000;

const TARGET_ALLOCATED_PER_SECOND = 100_000;
const TARGET_EXPORT_ROWS_PER_SECOND = 100_000;
/**
 * Streaming: the export may grow the process by at most this much, well under what holding the file
 * would take (its CSV text alone is 94 MB for 1,000,000 rows, its rows as objects several times that).
 * What growth there is, is garbage the collector has not reclaimed yet; it plateaus (about 60 MB on
 * PostgreSQL, whose driver's row objects outlive a young-generation collection; about 1 MB on SQLite).
 */
const TARGET_EXPORT_RSS_GROWTH_MB = 128;
const TARGET_RESULTS_PER_SECOND = 5_000;
const TARGET_CODEC_RATIO = 0.5;

const MB = 1024 * 1024;

async function api(cp: ControlPlaneProcess, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(cp.url + path, {
    method,
    headers: { authorization: `Bearer ${cp.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as unknown;
}

function gtinOf(item: number, prefix = '0950600'): string {
  const body = `1${prefix}${String(item).padStart(12 - prefix.length, '0')}`;
  return body + String(computeGs1CheckDigit(body));
}

async function createProduct(cp: ControlPlaneProcess): Promise<string> {
  const body = demoProductBody({
    name: 'Bench phone',
    description: 'A product whose serials the benchmark allocates',
    gtin: gtinOf(Math.floor(Math.random() * 99_999)),
  });
  const product = (await api(cp, 'POST', '/api/v2/products', body)) as { id: string };
  return product.id;
}

/** Streams the export, counting lines, while sampling the control plane's RSS every 10 ms. */
async function streamExport(
  cp: ControlPlaneProcess,
  path: string,
): Promise<{ rows: number; seconds: number; peakRss: number }> {
  let peakRss = cp.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, cp.rss());
  }, 10);
  const started = performance.now();
  try {
    const res = await fetch(cp.url + path, { headers: { authorization: `Bearer ${cp.key}` } });
    if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}`);
    let lines = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines += 1;
    }
    return {
      rows: lines - 1,
      seconds: (performance.now() - started) / 1000,
      peakRss: Math.max(peakRss, cp.rss()),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** Allocation, the 1,000,000-row export and print-status against one control-plane process. */
async function serverRows(dialect: 'sqlite' | 'postgres'): Promise<BenchRow[]> {
  const cp = await startControlPlaneProcess(dialect);
  try {
    const productId = await createProduct(cp);
    const smallId = await createProduct(cp);
    await api(cp, 'POST', '/api/v2/carriers/batch', { productId: smallId, count: BATCH }); // warm-up
    let started = performance.now();
    const calls = EXPORT_ROWS / BATCH;
    for (let i = 0; i < calls; i++)
      await api(cp, 'POST', '/api/v2/carriers/batch', { productId, count: BATCH });
    const allocatedPerSecond = (calls * BATCH) / ((performance.now() - started) / 1000);
    for (let i = 1; i < SMALL_EXPORT_ROWS / BATCH; i++) {
      await api(cp, 'POST', '/api/v2/carriers/batch', { productId: smallId, count: BATCH });
    }

    // Memory that grows with the export would show as a larger growth for ten times the rows.
    const smallBaseline = cp.rss();
    const small = await streamExport(cp, `/api/v2/carriers/export?productId=${smallId}`);
    if (small.rows !== SMALL_EXPORT_ROWS)
      throw new Error(`export gave ${small.rows} rows, expected ${SMALL_EXPORT_ROWS}`);
    const smallGrowth = (small.peakRss - smallBaseline) / MB;
    const baseline = cp.rss();
    const exported = await streamExport(cp, `/api/v2/carriers/export?productId=${productId}`);
    if (exported.rows !== EXPORT_ROWS)
      throw new Error(`export gave ${exported.rows} rows, expected ${EXPORT_ROWS}`);
    const growth = (exported.peakRss - baseline) / MB;

    // Distinct serials per report (identical batches would be replayed): 90 % printed, 10 % failed.
    const report = (n: number) => ({
      results: Array.from({ length: REPORT }, (_, i) => ({
        serial: String(n * REPORT + i + 1),
        status: i % 10 === 0 ? 'failed' : 'printed',
        ...(i % 10 === 0 ? { reason: 'ribbon out' } : { deviceId: 'zt410-1' }),
      })),
    });
    await api(cp, 'POST', '/api/v2/carriers/print-status', report(0)); // warm-up
    started = performance.now();
    for (let n = 1; n <= REPORTS; n++) await api(cp, 'POST', '/api/v2/carriers/print-status', report(n));
    const resultsPerSecond = (REPORTS * REPORT) / ((performance.now() - started) / 1000);

    const db = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    return [
      {
        work: `serials allocated, 10,000 per call (${db})`,
        figure: allocatedPerSecond,
        unit: 'serials/s',
        target: `>= ${TARGET_ALLOCATED_PER_SECOND.toLocaleString('en-US')} serials/s`,
        met: allocatedPerSecond >= TARGET_ALLOCATED_PER_SECOND,
      },
      {
        work: `export of 1,000,000 serials as CSV (${db})`,
        figure: exported.rows / exported.seconds,
        unit: 'rows/s',
        target: `>= ${TARGET_EXPORT_ROWS_PER_SECOND.toLocaleString('en-US')} rows/s`,
        met: exported.rows / exported.seconds >= TARGET_EXPORT_ROWS_PER_SECOND,
      },
      {
        work: `  peak RSS of the control plane during it (${db})`,
        figure: exported.peakRss / MB,
        unit: 'MB',
        peer: { label: 'RSS before the export', figure: baseline / MB },
        target: `growth <= ${TARGET_EXPORT_RSS_GROWTH_MB} MB (was ${growth.toFixed(1)} MB)`,
        met: growth <= TARGET_EXPORT_RSS_GROWTH_MB,
      },
      {
        work: `  RSS growth, 1,000,000 vs 100,000 rows (${db})`,
        figure: growth,
        unit: 'MB',
        peer: { label: '100,000 rows', figure: smallGrowth },
        target: 'not proportional: < 10 x (100,000-row growth) + 16 MB',
        met: growth < 10 * Math.max(smallGrowth, 0) + 16,
      },
      {
        work: `print-status results, 1,000 per call (${db})`,
        figure: resultsPerSecond,
        unit: 'results/s',
        target: `>= ${TARGET_RESULTS_PER_SECOND.toLocaleString('en-US')} results/s`,
        met: resultsPerSecond >= TARGET_RESULTS_PER_SECOND,
      },
    ];
  } finally {
    await cp.stop();
  }
}

/** Best of a few rounds of `fn` over every input, in operations per second. */
function opsPerSecond(count: number, fn: (i: number) => void): number {
  let best = 0;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < count; i++) fn(i);
    best = Math.max(best, count / ((performance.now() - started) / 1000));
  }
  return best;
}

/** SGTIN-96 encodes of our codec and of epc-tds on the same inputs, in the same run. */
function codecRows(): BenchRow[] {
  const inputs = Array.from({ length: CODEC_INPUTS }, (_, i) => {
    const companyPrefixLength = 6 + (i % 7);
    return {
      gtin: gtinOf(i % 100_000, '0614141'),
      serial: 1 + ((i * 7_919_993) % 274_877_906_943),
      companyPrefixLength,
    };
  });
  const ours = (i: number) => {
    const x = inputs[i]!;
    return encodeSgtin96({
      gtin: x.gtin,
      serial: String(x.serial),
      filter: 1,
      companyPrefixLength: x.companyPrefixLength,
    }).hex;
  };
  const theirs = (i: number) => {
    const x = inputs[i]!;
    return new tds.Sgtin96()
      .setFilter(1)
      .setPartition(12 - x.companyPrefixLength)
      .setGtin(x.gtin)
      .setSerial(x.serial)
      .toHexString();
  };
  for (let i = 0; i < CODEC_INPUTS; i += 997) {
    if (ours(i) !== theirs(i)) throw new Error(`codecs disagree on input ${i}: ${ours(i)} vs ${theirs(i)}`);
  }
  const peer = opsPerSecond(CODEC_INPUTS, theirs);
  const figure = opsPerSecond(CODEC_INPUTS, ours);
  return [
    {
      work: 'SGTIN-96 encodes, @dpp/shared encodeSgtin96 (validating)',
      figure,
      unit: 'encodes/s',
      peer: { label: 'epc-tds, same inputs', figure: peer },
      ratio: figure / peer,
      target: `>= ${TARGET_CODEC_RATIO} of epc-tds`,
      met: figure / peer >= TARGET_CODEC_RATIO,
    },
  ];
}

/**
 * The print loop's figures: serials allocated per second (10,000 per call), export rows per second and
 * the control plane's peak RSS while it streams 1,000,000 serials (the control plane runs in its own
 * process), print-status results per second (1,000 per call), and SGTIN-96 encodes per second next to
 * epc-tds. SQLite always; PostgreSQL too when TEST_DATABASE_URL is set.
 */
export async function run(): Promise<BenchRow[]> {
  const rows = codecRows();
  rows.push(...(await serverRows('sqlite')));
  if (process.env.TEST_DATABASE_URL) rows.push(...(await serverRows('postgres')));
  return rows;
}
