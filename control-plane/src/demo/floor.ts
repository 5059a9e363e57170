import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type ApiCaller, httpCaller, printableProduct } from '../testing/journey.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PRINTER = 'sim-zebra';

export interface DemoFloorOptions {
  controlPlaneUrl: string;
  publicBaseUrl: string;
  apiKey: string;
  dataDir: string;
  consolePort: number;
  labels: number;
  log: (line: string) => void;
}

export interface DemoFloor {
  stop(): Promise<void>;
}

/** Runs a TypeScript entry point of this repository in its own process (the sim's and agent's CLIs). */
function runTs(entry: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry), ...args], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts firmware-sim (printer + scanner on ptys) and waits for the device paths it prints. */
async function startSimulator(): Promise<{
  child: ChildProcess;
  printer: string;
  scanner: string;
  labelDir: string;
}> {
  const child = runTs('firmware-sim/src/cli.ts', ['--printer', 'pty', '--scanner', 'pty']);
  child.stdin?.end();
  const lines = readline.createInterface({ input: child.stdout! });
  let printer = '';
  let scanner = '';
  let labelDir = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the simulator did not print its device paths within 20 s')),
      20_000,
    );
    child.once('exit', (code) => reject(new Error(`the simulator exited (${code}); is socat installed?`)));
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const m = JSON.parse(line) as { device?: string; path?: string; labelDir?: string };
      if (m.device === 'printer') [printer, labelDir] = [m.path!, m.labelDir!];
      if (m.device === 'scanner') scanner = m.path!;
      if (printer && scanner) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { child, printer, scanner, labelDir };
}

async function runToExit(child: ChildProcess, what: string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${what} failed (${code}): ${stderr.trim().split('\n').pop()}`);
}

/** Queues one job per serial and reports each state change until every job is finished. */
async function printLabels(call: ApiCaller, o: DemoFloorOptions, labelDir: string): Promise<void> {
  const product = await printableProduct(call, o.apiKey, o.labels, { name: 'Demo Phone' });
  o.log(
    `  Product ${product.productId} (GTIN ${product.gtin}) is ready to print; serials ${product.serials.join(', ')}`,
  );
  const refs: string[] = [];
  for (const serial of product.serials) {
    const r = await call('POST', '/api/v2/aidc/jobs', {
      key: o.apiKey,
      body: { gtin: product.gtin, serial },
    });
    if (r.status !== 201) throw new Error(`queue job: ${r.status} ${r.text}`);
    refs.push(r.body.data.jobRef as string);
  }
  const seen = new Map<string, string>();
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    for (const ref of refs) {
      const job = (await call('GET', `/api/v2/aidc/jobs/${ref}`, { key: o.apiKey })).body?.data;
      if (job && seen.get(ref) !== job.state) {
        seen.set(ref, job.state as string);
        o.log(`  ${ref}  serial ${job.serial}  ${job.state}`);
      }
    }
    if (
      [...seen.values()].filter((s) => ['SEALED', 'DEAD_LETTER', 'CANCELLED'].includes(s)).length ===
      refs.length
    )
      break;
    await new Promise((r) => setTimeout(r, 300));
  }
  const first = product.serials[0]!;
  o.log(
    [
      '',
      `  Printed labels (PNG):  ${labelDir}`,
      `  Scan one:              ${o.publicBaseUrl}/01/${product.gtin}/21/${first}`,
      `  Agent console:         http://127.0.0.1:${o.consolePort}`,
      '',
    ].join('\n'),
  );
}

/**
 * The simulated print floor of `npm start`: firmware-sim on ptys, one enrolled agent printing to it, and a
 * demo product whose labels go from job to SEALED. Everything talks to the control plane over HTTP and
 * MQTT, exactly as a real floor would; nothing here imports the agent or the simulator.
 */
export async function startDemoFloor(o: DemoFloorOptions): Promise<DemoFloor> {
  const call = httpCaller(o.controlPlaneUrl);
  const sim = await startSimulator();
  const children: ChildProcess[] = [sim.child];
  const stop = async () => {
    await Promise.all(children.map(stopChild));
  };
  try {
    const dir = path.join(o.dataDir, 'demo-agent');
    await fs.mkdir(dir, { recursive: true });
    const config = path.join(dir, 'dpp-agent.json');
    await fs.writeFile(
      config,
      JSON.stringify(
        {
          dataDir: './data',
          controlPlaneUrl: o.controlPlaneUrl,
          console: { host: '127.0.0.1', port: o.consolePort },
          printers: [
            {
              name: PRINTER,
              language: 'zpl',
              transport: { type: 'serial', path: sim.printer, baudRate: 115200 },
              rfid: true,
              scanner: { link: { type: 'serial', path: sim.scanner, baudRate: 115200 }, readsRfid: true },
            },
          ],
        },
        null,
        2,
      ),
    );
    const token = await call('POST', '/api/v2/devices/enrollment-tokens', {
      key: o.apiKey,
      body: { label: 'npm start demo', printerNames: [PRINTER], expiresInSeconds: 600 },
    });
    if (token.status !== 201) throw new Error(`enrollment token: ${token.status} ${token.text}`);
    await runToExit(
      runTs('agent/src/cli.ts', [
        'enroll',
        '--config',
        config,
        '--url',
        o.controlPlaneUrl,
        '--token',
        token.body.data.token,
        '--name',
        'demo-line',
        '--force',
      ]),
      'agent enroll',
    );
    const agent = runTs('agent/src/cli.ts', ['run', '--config', config]);
    children.push(agent);
    agent.stderr?.resume();
    agent.stdout?.resume();
    o.log(`  Simulated printer ${sim.printer}, scanner ${sim.scanner}; agent enrolled as "demo-line".`);
    await printLabels(call, o, sim.labelDir);
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
