/**
 * The standalone simulator as a user runs it: a child process printing JSON lines, driven over the
 * paths it printed, controlled on stdin, stopped with SIGTERM, leaving no socat behind.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { SCANNER_TRIGGER, ZPL_QUERY_HOST_STATUS, ZplLabelBuilder } from '@dpp/shared';
import { afterEach, describe, expect, it } from 'vitest';
import { openHostLink } from './testing/host-link.js';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const URL = 'https://id.example.com/01/09506000134352/21/2';
const EPC = '30764433400D1EC000000002';

interface Cli {
  child: ChildProcessWithoutNullStreams;
  next(match: (o: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

const running: Cli[] = [];
const labelDirs: string[] = [];
afterEach(async () => {
  for (const cli of running.splice(0)) {
    if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    await cli.exited;
  }
  for (const dir of labelDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI; its labels go to a temp folder removed after the test (the CLI keeps labels). */
function startCli(args: string[]): Cli {
  const labelDir = mkdtempSync(join(tmpdir(), 'dpp-sim-cli-test-'));
  labelDirs.push(labelDir);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', '--label-dir', labelDir, ...args], {
    cwd: pkgDir,
    stdio: 'pipe',
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    lines.push(JSON.parse(line) as Record<string, unknown>);
    for (const w of [...waiters]) w();
  });
  child.stderr.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const cli: Cli = {
    child,
    exited,
    next: (match, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          const i = lines.findIndex(match);
          if (i < 0) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(lines.splice(i, 1)[0] as Record<string, unknown>);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error('no matching line from the CLI'));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
  };
  running.push(cli);
  return cli;
}

/** Pids of the child processes of `pid` (Linux /proc). */
function childPids(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('cli', () => {
  it('starts a printer and a scanner on ptys, prints their paths, serves them, and cleans up on SIGTERM', async () => {
    const cli = startCli(['--printer', 'pty', '--scanner', 'pty']);
    const printer = await cli.next((o) => o.device === 'printer');
    const scanner = await cli.next((o) => o.device === 'scanner');
    expect(printer).toMatchObject({ transport: 'pty', baudRate: 115200 });
    expect(String(printer.path)).toMatch(/printer-host$/);
    expect(String(scanner.path)).toMatch(/scanner-host$/);
    const socats = childPids(cli.child.pid ?? 0);
    expect(socats).toHaveLength(2);

    const host = await openHostLink({ path: String(printer.path) });
    expect((await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus')).status.ready).toBe(true);
    cli.child.stdin.write('set paperOut on\n');
    expect(await cli.next((o) => 'faults' in o)).toEqual({ ok: true, faults: ['paperOut'] });
    expect((await host.query(ZPL_QUERY_HOST_STATUS, 'hostStatus')).status.paperOut).toBe(true);
    cli.child.stdin.write('set paperOut off\n');
    await host.write(
      new ZplLabelBuilder({ widthDots: 400, lengthDots: 400 }).qr(20, 20, URL).writeEpc(EPC).toString(),
    );
    expect(await cli.next((o) => o.event === 'formatReceived')).toEqual({
      event: 'formatReceived',
      formatIndex: 1,
    });
    expect(await cli.next((o) => o.event === 'labelPrinted')).toMatchObject({
      index: 1,
      epc: EPC,
      content: URL,
      void: false,
    });

    const scan = await openHostLink({ path: String(scanner.path) });
    await scan.write(SCANNER_TRIGGER);
    expect(await scan.nextScan()).toEqual({ kind: 'symbol', aimId: ']Q1', symbology: 'qr', data: URL });
    await Promise.all([host.close(), scan.close()]);

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(socats.filter(alive)).toEqual([]);
    expect(existsSync(String(printer.path))).toBe(false);
  });

  it('starts the printer on TCP and prints its port', async () => {
    const cli = startCli(['--printer', 'tcp', '--port', '0']);
    const printer = await cli.next((o) => o.device === 'printer');
    expect(printer).toMatchObject({ transport: 'tcp', host: '127.0.0.1', baudRate: null });
    const host = await openHostLink({ port: Number(printer.port) });
    expect((await host.query('~HQES', 'errorStatus')).status.ready).toBe(true);
    await host.close();
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });

  it('refuses unknown options with the usage and exit code 2', async () => {
    const cli = startCli(['--printer', 'serial']);
    let stderr = '';
    cli.child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await cli.exited).toBe(2);
    expect(stderr).toMatch(/--printer must be one of pty, tcp/);
    expect(stderr).toMatch(/usage: npm run sim/);
  });
});
