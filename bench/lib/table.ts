/** One line of the benchmark table: a figure, what it is compared with, and its target. */
export interface BenchRow {
  work: string;
  figure: number;
  unit: string;
  /** The peer or limit measured in the same run, e.g. "bare node:http 41,200 req/s". */
  peer?: { label: string; figure: number };
  /** figure / peer.figure, when there is a peer. */
  ratio?: number;
  /** Human-readable target, e.g. ">= 0.15 of bare node:http". */
  target: string;
  met: boolean;
}

export type Benchmark = () => Promise<BenchRow[]>;

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));

export function printTable(rows: readonly BenchRow[]): void {
  const cells = rows.map((r) => [
    r.work,
    `${fmt(r.figure)} ${r.unit}`,
    r.peer ? `${r.peer.label}: ${fmt(r.peer.figure)} ${r.unit}` : '-',
    r.ratio === undefined ? '-' : r.ratio.toFixed(3),
    r.target,
    r.met ? 'met' : 'MISSED',
  ]);
  const head = ['work', 'figure', 'peer / limit (same run)', 'ratio', 'target', 'result'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => x.padEnd(widths[i]!)).join(' | ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const c of cells) console.log(line(c));
}
