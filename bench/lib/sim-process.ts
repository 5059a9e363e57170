/**
 * The simulated printer and its scanner in a process of their own (`npm run sim`), as a printer is a machine of
 * its own: its rendering of each label does not share the thread of the agent under measure. Its events come
 * as JSON lines on stdout, its faults are set through stdin.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { PrinterMechanics } from '@dpp/firmware-sim';

/** A label as the printer reports it when it comes out. */
export interface OutLabel {
  formatIndex: number;
  void: boolean;
  epc: string | null;
  content: string | null;
}

/** What a benchmark sees of a simulated printer, in this process or in its own. */
export interface BenchPrinter {
  readonly labels: readonly OutLabel[];
  onFormatReceived(fn: (formatIndex: number) => void): void;
  onLabelPrinted(fn: (label: OutLabel) => void): void;
  pause(paused: boolean): void;
}

export interface SimProcess extends BenchPrinter {
  printerPath: string;
  scannerPath: string;
  close(): Promise<void>;
}

export async function startSimProcess(baudRate: number, m: PrinterMechanics): Promise<SimProcess> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const args = [
    ...['--printer', 'pty', '--scanner', 'pty', '--baud', String(baudRate)],
    ...['--speed', String(m.printSpeedIps), '--label-length', String(m.labelLengthIn)],
    ...['--encode-ms', String(m.rfidEncodeMs), '--readback-ms', String(m.rfidReadBackMs)],
  ];
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'firmware-sim/src/cli.ts'), ...args],
    { stdio: ['pipe', 'pipe', 'ignore'], cwd: root },
  );
  const events = new EventEmitter();
  const labels: OutLabel[] = [];
  const devices = new Map<string, string>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('{')) return;
    const o = JSON.parse(line) as Record<string, unknown>;
    if (typeof o.device === 'string') {
      devices.set(o.device, String(o.path));
      events.emit('device');
    } else if (o.event === 'formatReceived') events.emit('formatReceived', o.formatIndex as number);
    else if (o.event === 'labelPrinted') {
      const label = o as unknown as OutLabel;
      labels.push(label);
      events.emit('labelPrinted', label);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = () => devices.size === 2 && resolve();
    events.on('device', check);
    void exited.then(() => reject(new Error('the simulator process exited before it was up')));
  });
  return {
    printerPath: devices.get('printer')!,
    scannerPath: devices.get('scanner')!,
    labels,
    onFormatReceived: (fn) => events.on('formatReceived', fn),
    onLabelPrinted: (fn) => events.on('labelPrinted', fn),
    pause: (paused) => child.stdin!.write(`set paused ${paused ? 'on' : 'off'}\n`),
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
