import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { openStore, uuidv7 } from '@dpp/control-plane';
import type { BenchRow } from './lib/table.js';

/** Rows already in the table when the measured ones go in: append-only tables reach this in weeks. */
const ROWS = 1_500_000;
const MEASURED = 150_000;
const BATCH = 1000;

/**
 * Inserts ROWS rows shaped like the events table (text primary key) in transactions of 1,000, on SQLite
 * through the store, and returns the rate of the last MEASURED rows.
 */
async function insertRate(id: () => string): Promise<number> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-ids-'));
  const store = await openStore({ sqliteFile: path.join(dir, 'bench.sqlite') });
  try {
    await sql`create table id_bench (id text primary key, tenant_id text not null, type text not null,
      data text not null, occurred_at text not null)`.execute(store.db);
    let measuredMs = 0;
    for (let done = 0; done < ROWS; done += BATCH) {
      const rows = Array.from(
        { length: BATCH },
        () =>
          sql`(${id()}, 'tenant', 'print.confirmed', '{"serial":"123456","gtin":"09506000134352"}', ${new Date().toISOString()})`,
      );
      const t0 = performance.now();
      await store.db
        .transaction()
        .execute((trx) => sql`insert into id_bench values ${sql.join(rows)}`.execute(trx));
      if (done >= ROWS - MEASURED) measuredMs += performance.now() - t0;
    }
    return MEASURED / (measuredMs / 1000);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchRow[]> {
  const peer = await insertRate(randomUUID);
  const ours = await insertRate(uuidv7);
  return [
    {
      work: `insert rate into an append table of ${(ROWS / 1e6).toFixed(1)}M rows, UUIDv7 ids (SQLite)`,
      figure: ours,
      unit: 'rows/s',
      peer: { label: 'random UUIDv4 ids', figure: peer },
      ratio: ours / peer,
      target: '>= 2x random ids',
      met: ours / peer >= 2,
    },
  ];
}
