import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchRow, type Benchmark, printTable } from './lib/table.js';

/**
 * `npm run bench [-- filter...]`: runs every `*.bench.ts` in this folder (or those whose name contains one of
 * the filters) and prints one table of figures against their targets. Targets are reported, never asserted.
 */
async function main(): Promise<void> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const filters = process.argv.slice(2);
  const chosen = (f: string) => filters.length === 0 || filters.some((filter) => f.includes(filter));
  const files = (await readdir(here)).filter((f) => f.endsWith('.bench.ts') && chosen(f)).sort();
  const rows: BenchRow[] = [];
  for (const file of files) {
    process.stderr.write(`running ${file} ...\n`);
    const mod = (await import(path.join(here, file))) as { run: Benchmark };
    rows.push(...(await mod.run()));
  }
  console.log('');
  printTable(rows);
  const missed = rows.filter((r) => !r.met).length;
  console.log(
    `\n${rows.length} figures, ${rows.length - missed} targets met, ${missed} missed (machine: ${process.arch}, node ${process.version})`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
