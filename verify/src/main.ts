/** The CLI as a function: `main(argv, io)` returns the exit code (0 verified, 1 broken or pending, 2 input). */
import { homedir } from 'node:os';
import { parseArgs, USAGE } from './args.js';
import { isVerifyError, reasonOf } from './errors.js';
import { rasteriseWithPdftoppm } from './rasterise.js';
import { formatReport } from './report.js';
import { runVerify, type VerifyIo } from './verify.js';

export interface Io extends VerifyIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export function nodeIo(): Io {
  return {
    stdout: (t) => void process.stdout.write(t),
    stderr: (t) => void process.stderr.write(t),
    warn: (m) => void process.stderr.write(`dpp-verify: warning: ${m}\n`),
    fetch: (url, init) => fetch(url, init),
    env: process.env,
    homedir: homedir(),
    rasterisePdf: rasteriseWithPdftoppm,
  };
}

export async function main(argv: readonly string[], io: Io = nodeIo()): Promise<number> {
  let json = argv.includes('--json');
  try {
    const opts = parseArgs(argv);
    json = opts.json;
    if (opts.help) {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    const report = await runVerify(opts, io);
    io.stdout(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
    return report.exitCode;
  } catch (e) {
    const code = isVerifyError(e) ? e.code : 'UNEXPECTED';
    const message = reasonOf(e);
    if (json) io.stdout(`${JSON.stringify({ error: { code, message }, exitCode: 2 }, null, 2)}\n`);
    io.stderr(`dpp-verify: ${message}\n`);
    return 2;
  }
}
