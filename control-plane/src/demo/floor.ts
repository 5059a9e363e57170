import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type JobState, isTerminal } from '@dpp/shared';
import { type ApiCaller, httpCaller, printableProduct } from './journey.js';

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
  /** Stops the simulator and the agent (a graceful stop of `npm start`). */
  stop(): Promise<void>;
  /** Whether the simulator and the agent are both still running. */
  running(): boolean;
  /** The demo labels, queued and followed until each job is finished: how many were sealed, of how many. */
  printing: Promise<{ sealed: number; total: number }>;
}

/** tsx's loader by its own address, so a command starts the same from whatever folder the demo runs in. */
const TSX = import.meta.resolve('tsx');

type Bin = 'dpp-sim' | 'dpp-agent';
const BIN_PACKAGE: Record<Bin, string> = { 'dpp-sim': '@dpp/firmware-sim', 'dpp-agent': '@dpp/agent' };

/**
 * The file of a package's command (its package.json `bin`), found as Node finds the package: the demo
 * starts the simulator and the agent as their own programs, not by reaching into their source folders.
 */
function binPath(bin: Bin): string {
  const manifest = createRequire(import.meta.url).resolve(`${BIN_PACKAGE[bin]}/package.json`);
  const { bin: bins } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return path.resolve(path.dirname(manifest), bins[bin]!);
}

/** Runs a command of the floor (TypeScript, through tsx) with its output piped to this process. */
function runBin(bin: Bin, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', TSX, binPath(bin), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/**
 * Runs a command as a device of the floor: in its own process group, its output to `log` (a file, not a
 * pipe this process owns), so it outlives a crash of the control plane as a real printer and agent would.
 */
async function runDevice(bin: Bin, args: string[], log: string): Promise<number> {
  const out = await fs.open(log, 'w');
  try {
    const child = spawn(process.execPath, ['--import', TSX, binPath(bin), ...args], {
      detached: true,
      stdio: ['ignore', out.fd, out.fd],
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${bin}`);
    return child.pid;
  } finally {
    await out.close();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
async function stopPid(pid: number): Promise<void> {
  if (!alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 5_000;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What runs on the floor, kept in DATA_DIR so the next start finds it (`floor.json`). */
interface FloorRecord {
  simPid: number;
  agentPid: number;
  printer: string;
  scanner: string;
  labelDir: string;
  controlPlaneUrl: string;
}

/** Starts firmware-sim (printer + scanner on ptys) and waits for the device paths it prints. */
async function startSimulator(
  dir: string,
): Promise<{ pid: number; printer: string; scanner: string; labelDir: string }> {
  const log = path.join(dir, 'sim.log');
  const pid = await runDevice('dpp-sim', ['--printer', 'pty', '--scanner', 'pty'], log);
  let printer = '';
  let scanner = '';
  let labelDir = '';
  const deadline = Date.now() + 20_000;
  while (!printer || !scanner) {
    if (!alive(pid)) {
      const text = await fs.readFile(log, 'utf8').catch(() => '');
      throw new Error(`the simulator exited (${text.trim().split('\n').pop() ?? ''}); is socat installed?`);
    }
    if (Date.now() > deadline) {
      await stopPid(pid);
      throw new Error('the simulator did not print its device paths within 20 s');
    }
    await new Promise((r) => setTimeout(r, 100));
    for (const line of (await fs.readFile(log, 'utf8')).split('\n')) {
      if (!line.startsWith('{')) continue;
      const m = JSON.parse(line) as { device?: string; path?: string; labelDir?: string };
      if (m.device === 'printer') [printer, labelDir] = [m.path!, m.labelDir!];
      if (m.device === 'scanner') scanner = m.path!;
    }
  }
  return { pid, printer, scanner, labelDir };
}

async function runToExit(child: ChildProcess, what: string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${what} failed (${code}): ${stderr.trim().split('\n').pop()}`);
}

/** Queues one job per serial and reports each state change until every job is finished. */
async function printLabels(
  call: ApiCaller,
  o: DemoFloorOptions,
  labelDir: string,
): Promise<{ sealed: number; total: number }> {
  const product = await printableProduct(call, o.apiKey, o.labels, { name: 'Demo Phone' });
  o.log(
    `  Product ${product.productId} (GTIN ${product.gtin}) is ready to print; serials ${product.serials.join(', ')}`,
  );
  const refs: string[] = [];
  for (const serial of product.serials) {
    const r = await call('POST', '/api/v2/aidc/jobs', {
      key: o.apiKey,
      // The last label carries a GS1 DataMatrix with the Digital Link beside its QR code and its RFID tag;
      // the others the QR code and the tag (each symbol's proof costs the agent time on every label, and a
      // label that takes longer can see the next one out under the scanner, which an unattended demo floor
      // cannot resolve: no label follows the last).
      body: {
        gtin: product.gtin,
        serial,
        ...(serial === product.serials.at(-1) ? { labelTemplate: { dataMatrix: 'digital-link' } } : {}),
      },
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
    if ([...seen.values()].filter((s) => isTerminal(s as JobState)).length === refs.length) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  const first = product.serials[0]!;
  o.log(
    [
      '',
      `  Printed labels (PNG):  ${labelDir}`,
      `  Scan one:              ${o.publicBaseUrl}/01/${product.gtin}/21/${first}`,
      `  Verify its proof:      npm run verify -- ${o.publicBaseUrl}/01/${product.gtin}/21/${first}`,
      `  Agent console:         http://127.0.0.1:${o.consolePort}`,
      '',
    ].join('\n'),
  );
  return { sealed: [...seen.values()].filter((s) => s === 'SEALED').length, total: refs.length };
}

/**
 * The simulated print floor of `npm start`: firmware-sim on ptys, one enrolled agent printing to it, and a
 * demo product whose labels go from job to SEALED. Everything talks to the control plane over HTTP and
 * MQTT, exactly as a real floor would; nothing here imports the agent or the simulator.
 *
 * The simulator and the agent run in their own process groups with their output in files (`sim.log`,
 * `agent.log` beside `floor.json` in `DATA_DIR/demo-agent`), so a crash of the control plane leaves them
 * running, as separate machines would be; the next start adopts a floor still alive. `stop()` (a graceful
 * stop of `npm start`) stops them.
 */
export async function startDemoFloor(o: DemoFloorOptions): Promise<DemoFloor> {
  const call = httpCaller(o.controlPlaneUrl);
  const dir = path.join(o.dataDir, 'demo-agent');
  await fs.mkdir(dir, { recursive: true });
  const recordFile = path.join(dir, 'floor.json');
  const left = await fs
    .readFile(recordFile, 'utf8')
    .then((t) => JSON.parse(t) as FloorRecord)
    .catch(() => null);
  let record: FloorRecord;
  if (left && alive(left.simPid) && alive(left.agentPid) && left.controlPlaneUrl === o.controlPlaneUrl) {
    record = left;
    o.log(
      `  The print floor left running is adopted (simulator pid ${left.simPid}, agent pid ${left.agentPid}).`,
    );
  } else {
    if (left) await Promise.all([stopPid(left.simPid), stopPid(left.agentPid)]);
    record = await startFloor(call, o, dir);
    await fs.writeFile(recordFile, JSON.stringify(record, null, 2));
  }
  const stop = async () => {
    await Promise.all([stopPid(record.simPid), stopPid(record.agentPid)]);
    await fs.rm(recordFile, { force: true });
  };
  const running = () => alive(record.simPid) && alive(record.agentPid);
  return { stop, running, printing: printLabels(call, o, record.labelDir) };
}

/** Starts the simulator, enrolls an agent for it and starts the agent. */
async function startFloor(call: ApiCaller, o: DemoFloorOptions, dir: string): Promise<FloorRecord> {
  const sim = await startSimulator(dir);
  try {
    const config = path.join(dir, 'dpp-agent.json');
    await fs.writeFile(
      config,
      JSON.stringify(
        {
          dataDir: './data',
          controlPlaneUrl: o.controlPlaneUrl,
          console: { host: '127.0.0.1', port: o.consolePort },
          // One label at a time: nobody stands at a demo floor to scan a label that moved on before its scan
          // (the agent asks a person when the scanner already sees the next label, which a loaded machine
          // can cause on the simulator); a staffed floor keeps the default pipeline.
          jobs: { pipelineDepth: 1 },
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
      runBin('dpp-agent', [
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
    const agentPid = await runDevice('dpp-agent', ['run', '--config', config], path.join(dir, 'agent.log'));
    o.log(`  Simulated printer ${sim.printer}, scanner ${sim.scanner}; agent enrolled as "demo-line".`);
    return {
      simPid: sim.pid,
      agentPid,
      printer: sim.printer,
      scanner: sim.scanner,
      labelDir: sim.labelDir,
      controlPlaneUrl: o.controlPlaneUrl,
    };
  } catch (err) {
    await stopPid(sim.pid);
    throw err;
  }
}
