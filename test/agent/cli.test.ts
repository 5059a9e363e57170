/**
 * The `dpp-agent` commands in-process (`main(argv)` with captured output) against a real control plane
 * with its broker, and the simulated printer and scanner.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { startPrinter, startScanner, type PrinterHandle, type ScannerHandle } from '@dpp/firmware-sim';
import { runCli as main, type CliOutput as Output } from '@dpp/agent';

function capture(): Output & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, line: (t = '') => out.push(t), error: (t) => err.push(t) };
}

describe('dpp-agent CLI', () => {
  let t: TestControlPlane;
  let dir: string;
  let printer: PrinterHandle;
  let scanner: ScannerHandle;
  let configFile: string;
  const cwd = process.cwd();

  beforeAll(async () => {
    t = await startTestControlPlane({ mqtt: true });
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-cli-'));
    printer = await startPrinter({ transport: 'tcp', port: 0 });
    scanner = await startScanner({ printer, transport: 'pty' });
    process.chdir(dir);
  });
  afterAll(async () => {
    process.chdir(cwd);
    await scanner?.close();
    await printer?.close();
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints its usage and refuses unknown commands', async () => {
    const o = capture();
    expect(await main(['--help'], o)).toBe(0);
    expect(o.out.join('\n')).toMatch(/enroll --url URL --token TOKEN/);
    const bad = capture();
    expect(await main(['frobnicate'], bad)).toBe(2);
    expect(bad.err[0]).toMatch(/unknown command "frobnicate"/);
  });

  it('enrolls once, writing a starter config, and refuses a second enrollment', async () => {
    const created = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.admin,
      body: {},
    });
    const o = capture();
    expect(
      await main(['enroll', '--url', t.url, '--token', created.body.data.token, '--name', 'line-7'], o),
    ).toBe(0);
    expect(o.out[0]).toMatch(/^enrolled as line-7 \(device [0-9a-f-]{36}, tenant /);
    configFile = path.join(dir, 'dpp-agent.json');
    const starter = JSON.parse(await readFile(configFile, 'utf8'));
    expect(starter).toEqual({ dataDir: 'dpp-agent-data', controlPlaneUrl: t.url, printers: [] });
    expect((await stat(path.join(dir, 'dpp-agent-data', 'device-key.jwk.json'))).mode & 0o777).toBe(0o600);
    const again = capture();
    expect(await main(['enroll', '--token', 'dpp_enr_whatever_whatever'], again)).toBe(1);
    expect(again.err[0]).toMatch(/already holds an enrollment; use --force/);
  });

  it('checks everything with doctor, printers included, and names what fails', async () => {
    await writeFile(
      configFile,
      JSON.stringify({
        dataDir: 'dpp-agent-data',
        controlPlaneUrl: t.url,
        console: { port: 0 },
        printers: [
          {
            name: 'zebra-1',
            language: 'zpl',
            rfid: true,
            transport: { type: 'tcp', host: '127.0.0.1', port: printer.port },
            scanner: { link: { type: 'serial', path: scanner.path, baudRate: 115200 } },
          },
          { name: 'office', language: 'pdf', transport: { type: 'spool', dir: path.join(dir, 'spool') } },
        ],
      }),
    );
    const o = capture();
    expect(await main(['doctor'], o)).toBe(0);
    const text = o.out.join('\n');
    for (const check of [
      'config',
      'data folder',
      'key file',
      'enrollment',
      'control plane',
      'access token',
      'jwks',
      'broker',
      'printer zebra-1',
      'scanner zebra-1',
      'printer office',
      'outbox',
    ])
      expect(text).toMatch(new RegExp(`^ok +${check} `, 'm'));
    expect(text).toMatch(/^ok +key file +.* mode 600/m);
    expect(text).toMatch(/^ok +printer zebra-1 +ready$/m);
    expect(text).toMatch(/all checks passed/);

    printer.faults.set('paperOut', true);
    const p = capture();
    expect(await main(['printers'], p)).toBe(0);
    expect(p.out.join('\n')).toMatch(
      /zebra-1 +zpl +tcp +127\.0\.0\.1:\d+ +yes +no +yes +paper_out +paperOut/,
    );
    expect(p.out.join('\n')).toMatch(/office +pdf +spool .* one-way transport: no status/);
    printer.faults.set('paperOut', false);

    const key = path.join(dir, 'dpp-agent-data', 'device-key.jwk.json');
    const { chmod } = await import('node:fs/promises');
    await chmod(key, 0o644);
    const bad = capture();
    expect(await main(['doctor'], bad)).toBe(1);
    expect(bad.out.join('\n')).toMatch(/^FAIL +key file +.*chmod 600/m);
    await chmod(key, 0o600);
  });

  it('runs as `dpp-agent run` and stops gracefully on SIGTERM', { timeout: 60_000 }, async () => {
    const port = await freePort();
    const config = JSON.parse(await readFile(configFile, 'utf8'));
    await writeFile(configFile, JSON.stringify({ ...config, console: { port } }));
    const repo = fileURLToPath(new URL('../../', import.meta.url));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repo, 'agent/src/cli.ts'), 'run', '--config', configFile],
      {
        cwd: repo,
        env: { ...process.env, DPP_AGENT_LOG_LEVEL: 'silent' },
        stdio: 'ignore',
      },
    );
    try {
      // Until the console answers and the first status of the printer is in (a loaded machine takes a while).
      const status = async () => {
        const o = capture();
        return (await main(['status'], o)) === 0 ? o.out.join('\n') : '';
      };
      await expect.poll(status, { timeout: 30_000, interval: 500 }).toMatch(/^zebra-1 +ready/m);
      // No label yet: nothing waited (the printer's waits on the agent, and on a scan of the label ahead).
      expect(await status()).toMatch(/^zebra-1 +ready +- +- +0 agent, 0 scan/m);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('says plainly that no agent is running', async () => {
    const o = capture();
    expect(await main(['status'], o)).toBe(1);
    expect(o.err[0]).toMatch(/no agent answers/);
  });
});
