/** Builds the driver of a configured printer. */
import type { PrinterConfig } from '../config/index.js';
import { createTransport, type ByteLink, type PrinterTransport } from '../transports/index.js';
import { OneWayPrinter } from './one-way-printer.js';
import type { PrinterDriver } from './types.js';
import { ZplPrinter } from './zpl-printer.js';

/** `transport` may be handed in (a simulator, a test double); by default the configured one. */
export function createPrinterDriver(config: PrinterConfig, transport?: PrinterTransport): PrinterDriver {
  const t = transport ?? createTransport(config.transport, config.language);
  if (config.language === 'zpl' && t.link) {
    return new ZplPrinter({
      name: config.name,
      transport: t as PrinterTransport & { link: ByteLink },
      statusTimeoutMs: config.statusTimeoutMs,
    });
  }
  return new OneWayPrinter(config.name, config.language, t);
}
