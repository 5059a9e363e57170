/** Runs the CLI's main function with captured output, the world's fetch and a state file of its own. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main, type Io } from '../main.js';
import type { Report } from '../report.js';
import type { LinkName, LinkResult } from '../result.js';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The --json report, when the run printed one. */
  report: Report | undefined;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'dpp-verify-test-'));
}

export async function run(argv: string[], io: Partial<Io> & Pick<Io, 'fetch'>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    warn: (m) => void (stderr += `${m}\n`),
    env: {},
    homedir: tempDir(),
    rasterisePdf: async () => null,
    ...io,
  });
  let report: Report | undefined;
  if (argv.includes('--json') && code !== 2) report = JSON.parse(stdout) as Report;
  return { code, stdout, stderr, report };
}

/** The results of one link across the report (keys once, the others per seal). */
export function linkOf(report: Report | undefined, link: LinkName, seal = 0): LinkResult {
  if (report === undefined) throw new Error('no report');
  if (link === 'keys') return report.keys;
  return report.seals[seal]!.links.find((l) => l.link === link)!;
}

/** The links that are not verified, by name. */
export function notVerified(report: Report | undefined): string[] {
  if (report === undefined) throw new Error('no report');
  return [report.keys, ...report.seals.flatMap((s) => s.links)]
    .filter((l) => l.status !== 'verified')
    .map((l) => l.link);
}
