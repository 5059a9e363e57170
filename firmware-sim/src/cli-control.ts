/**
 * The CLI's control channel: one command per line on stdin, one JSON answer per line on stdout.
 *   set <fault> on|off | script <n> <fault> | next <fault> | clear | baud <n>|off | resume | status | labels
 */
import { isFaultName, isLabelFault } from './faults/faults.js';
import type { PrinterHandle } from './printer/start-printer.js';

export function runControlCommand(printer: PrinterHandle, line: string): Record<string, unknown> {
  const [cmd = '', a = '', b = ''] = line.trim().split(/\s+/);
  switch (cmd) {
    case 'set':
      if (!isFaultName(a) || !['on', 'off'].includes(b)) return { error: 'usage: set <fault> on|off' };
      printer.faults.set(a, b === 'on');
      return { ok: true, faults: printer.faults.active() };
    case 'script':
      if (!/^\d+$/.test(a) || !isLabelFault(b)) return { error: 'usage: script <n> <label fault>' };
      printer.faults.scriptLabel(Number(a), b);
      return { ok: true };
    case 'next':
      if (!isLabelFault(a)) return { error: 'usage: next <label fault>' };
      printer.faults.scriptNext(a);
      return { ok: true };
    case 'clear':
      printer.faults.clear();
      return { ok: true, faults: [] };
    case 'baud':
      if (a !== 'off' && !/^\d+$/.test(a)) return { error: 'usage: baud <n>|off' };
      printer.faults.setBaudRate(a === 'off' ? null : Number(a));
      return { ok: true, baudRate: printer.faults.baudRate };
    case 'resume':
      printer.resume();
      return { ok: true };
    case 'status':
      return { status: printer.status(), faults: printer.faults.active(), baudRate: printer.faults.baudRate };
    case 'labels':
      return { labels: printer.labels.map(({ png: _png, ...rest }) => rest) };
    case '':
      return {};
    default:
      return { error: `unknown command ${cmd}` };
  }
}
