/** What the CLI prints: plain lines on stdout, one error line on stderr. */
export interface Output {
  line(text?: string): void;
  error(text: string): void;
}

export const consoleOutput: Output = {
  line: (text = '') => process.stdout.write(text + '\n'),
  error: (text) => process.stderr.write(text + '\n'),
};

/** Fixed-width columns. */
export function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}
