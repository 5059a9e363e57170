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
  printer: PrinterHandle;
  scanner: ScannerHandle;
  close(): Promise<void>;
}

/**
 * One RFID printer and its scanner on ptys paced at `baudRate`, and the agent. With `mechanics` the printer
 * takes that long per label (firmware-sim's mechanical model); without, as long as rendering takes.
 */
export async function benchFloor(
  t: TestControlPlane,
  key: string,
  baudRate: number,
  mechanics: PrinterMechanics | null = null,
): Promise<BenchFloor> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-bench-floor-'));
  const printer = await startPrinter({ transport: 'pty', baudRate, mechanics });
  const scanner = await startScanner({ printer, transport: 'pty', baudRate });
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
          transport: { type: 'serial', path: printer.path!, baudRate },
          scanner: { link: { type: 'serial', path: scanner.path!, baudRate }, readsRfid: true },
        },
      ],
    }),
    { log: silentLogger },
  );
  return {
    agent,
    printer,
    scanner,
    close: async () => {
      await agent.stop({ drainMs: 0 });
      await scanner.close();
      await printer.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
