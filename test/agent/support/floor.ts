/**
 * A print floor for tests: simulated printers (and scanners) on real ptys or TCP, a device enrolled with
 * the control plane, and the agent running in this process (or its configuration written to a file for
 * a child process).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestControlPlane } from '@dpp/testkit';
import {
  startPrinter,
  startScanner,
  type PrinterHandle,
  type ScannerHandle,
  type StartPrinterOptions,
} from '@dpp/firmware-sim';
import {
  createLogger,
  enroll,
  parseAgentConfig,
  silentLogger,
  startAgent,
  type Agent,
  type AgentConfig,
  type AgentConfigInput,
  type Identity,
} from '@dpp/agent';

export interface FloorPrinter {
  name: string;
  rfid?: boolean;
  /** A scanner reading this printer's labels (default true). */
  scanner?: boolean;
  transport?: 'pty' | 'tcp';
  sim?: Partial<StartPrinterOptions>;
  config?: Record<string, unknown>;
}

export interface FloorOptions {
  printers: FloorPrinter[];
  /** Overrides of the agent configuration. */
  agent?: Partial<AgentConfigInput>;
  /** Printers without a simulator (a spool folder, CUPS), configured as given. */
  otherPrinters?: Array<Record<string, unknown>>;
  /** Start the agent in this process (default true). */
  start?: boolean;
  /** The agent's clock (Date.now by default). */
  now?: () => number;
}

export interface Floor {
  dir: string;
  dataDir: string;
  configFile: string;
  identity: Identity;
  config: AgentConfig;
  agent: Agent | null;
  printers: Record<string, PrinterHandle>;
  scanners: Record<string, ScannerHandle>;
  startAgent(): Promise<Agent>;
  close(): Promise<void>;
}

/** Logs of the agent under test: silent unless AGENT_TEST_LOG names a level. */
function testLogger() {
  const level = process.env.AGENT_TEST_LOG;
  return level ? createLogger({ level: level as 'debug' }) : silentLogger;
}

export async function startFloor(
  t: TestControlPlane,
  adminKey: string,
  options: FloorOptions,
): Promise<Floor> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-floor-'));
  const dataDir = path.join(dir, 'data');
  const printers: Record<string, PrinterHandle> = {};
  const scanners: Record<string, ScannerHandle> = {};
  const printerConfigs: Array<Record<string, unknown>> = [];
  for (const p of options.printers) {
    const kind = p.transport ?? 'pty';
    const sim = await startPrinter({ transport: kind, port: 0, rfid: p.rfid ?? true, ...p.sim });
    printers[p.name] = sim;
    let scanner: Record<string, unknown> | undefined;
    if (p.scanner !== false) {
      const s = await startScanner({ printer: sim, transport: 'pty' });
      scanners[p.name] = s;
      scanner = {
        link: { type: 'serial', path: s.path, baudRate: 115200 },
        timeoutMs: 5000,
        readsRfid: p.rfid ?? true,
      };
    }
    printerConfigs.push({
      name: p.name,
      language: 'zpl',
      rfid: p.rfid ?? true,
      transport:
        kind === 'pty'
          ? { type: 'serial', path: sim.path, baudRate: 115200 }
          : { type: 'tcp', host: '127.0.0.1', port: sim.port },
      ...(scanner ? { scanner } : {}),
      ...p.config,
    });
  }
  const created = await t.call('POST', '/api/v2/devices/enrollment-tokens', { key: adminKey, body: {} });
  if (created.status !== 201) throw new Error(`enrollment token: ${created.status} ${created.text}`);
  const identity = await enroll({
    url: t.url,
    token: created.body.data.token as string,
    name: 'floor-1',
    dataDir,
  });
  const input: AgentConfigInput = {
    dataDir,
    controlPlaneUrl: t.url,
    console: { host: '127.0.0.1', port: 0, enabled: true },
    poll: { intervalMs: 500, idleIntervalMs: 5000, notReadyRetryMs: 200, statusIntervalMs: 1000 },
    outbox: { maxBackoffMs: 1000, keepDelivered: 5000 },
    ...options.agent,
    // A simulated printer without a mechanical model puts the next label out as soon as it is rendered,
    // before a scanner over the exit can read the one before: no real printer does, and the pipeline (one
    // label scanned while the next prints) needs the time a real one takes. Such floors run one job at a
    // time, as before the pipeline; pipeline.e2e.test.ts runs it on printers with mechanics.
    jobs: {
      ...(options.printers.some((p) => !p.sim?.mechanics) ? { pipelineDepth: 1 } : {}),
      ...options.agent?.jobs,
    },
    printers: [...printerConfigs, ...(options.otherPrinters ?? [])] as AgentConfigInput['printers'],
  };
  const config = parseAgentConfig(input);
  const configFile = path.join(dir, 'dpp-agent.json');
  await writeFile(configFile, JSON.stringify(input, null, 2));

  const floor: Floor = {
    dir,
    dataDir,
    configFile,
    identity,
    config,
    agent: null,
    printers,
    scanners,
    startAgent: async () => {
      floor.agent = await startAgent(config, {
        log: testLogger(),
        ...(options.now ? { now: options.now } : {}),
      });
      return floor.agent;
    },
    close: async () => {
      await floor.agent?.stop({ drainMs: 0 });
      for (const s of Object.values(scanners)) await s.close();
      for (const p of Object.values(printers)) await p.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  if (options.start !== false) await floor.startAgent();
  return floor;
}
