/**
 * The print loop for benchmarks, over HTTP like an integrator (the product made printable by the demo's
 * `printableProduct`): jobs queued; a device enrolled with the agent running in
 * this process on simulated printers and scanners.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CallResult, TestControlPlane } from '@dpp/testkit';
import { enroll, parseAgentConfig, silentLogger, startAgent, type Agent } from '@dpp/agent';
import { startSimProcess, type BenchPrinter } from './sim-process.js';
import {
  startPrinter,
  startScanner,
  type PrinterHandle,
  type PrinterMechanics,
  type ScannerHandle,
} from '@dpp/firmware-sim';

function ok(r: CallResult, status: number, what: string): CallResult {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}

export async function queueJobs(
  t: TestControlPlane,
  key: string,
  gtin: string,
  serials: string[],
): Promise<void> {
  for (const serial of serials)
    ok(await t.call('POST', '/api/v2/aidc/jobs', { key, body: { gtin, serial } }), 201, `job ${serial}`);
}

export interface BenchFloor {
  agent: Agent;
  printer: BenchPrinter;
  close(): Promise<void>;
}

/** The simulator in this process, seen as a benchmark sees a printer. */
function inProcess(printer: PrinterHandle, scanner: ScannerHandle) {
  const view: BenchPrinter = {
    labels: printer.labels,
    onFormatReceived: (fn) => void printer.events.on('formatReceived', (e) => fn(e.formatIndex)),
    onLabelPrinted: (fn) => void printer.events.on('labelPrinted', fn),
    pause: (paused) => printer.faults.set('paused', paused),
  };
  return {
    printer: view,
    printerPath: printer.path!,
    scannerPath: scanner.path!,
    close: async () => {
      await scanner.close();
      await printer.close();
    },
  };
}

/**
 * One RFID printer and its scanner on ptys paced at `baudRate`, and the agent. With `mechanics` the printer
 * takes that long per label (firmware-sim's mechanical model); without, as long as rendering takes. With
 * `ownProcess` the simulator runs in a process of its own (`sim-process.ts`; mechanics required).
 */
export async function benchFloor(
  t: TestControlPlane,
  key: string,
  baudRate: number,
  mechanics: PrinterMechanics | null = null,
  ownProcess = false,
): Promise<BenchFloor> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-bench-floor-'));
  const sim =
    ownProcess && mechanics
      ? await startSimProcess(baudRate, mechanics).then((p) => ({ ...p, printer: p as BenchPrinter }))
      : await startPrinter({ transport: 'pty', baudRate, mechanics }).then(async (printer) =>
          inProcess(printer, await startScanner({ printer, transport: 'pty', baudRate })),
        );
  const token = ok(
    await t.call('POST', '/api/v2/devices/enrollment-tokens', { key, body: {} }),
    201,
    'enrollment token',
  );
  const dataDir = path.join(dir, 'data');
  await enroll({ url: t.url, token: token.body.data.token as string, dataDir });
  const agent = await startAgent(
    parseAgentConfig({
      dataDir,
      console: { host: '127.0.0.1', port: 0, enabled: true },
      // A paused printer (the bench queues its jobs so) is asked again soon after it is resumed.
      poll: { notReadyRetryMs: 50 },
      printers: [
        {
          name: 'bench-1',
          language: 'zpl',
          rfid: true,
          transport: { type: 'serial', path: sim.printerPath, baudRate },
          scanner: { link: { type: 'serial', path: sim.scannerPath, baudRate }, readsRfid: true },
        },
      ],
    }),
    { log: silentLogger },
  );
  return {
    agent,
    printer: sim.printer,
    close: async () => {
      await agent.stop({ drainMs: 0 });
      await sim.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
