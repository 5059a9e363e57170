/** Builds the transport a printer's configuration names. */
import type { TransportConfig } from '../config/index.js';
import { CupsTransport } from './cups.js';
import { LineTransport } from './line-transport.js';
import { SerialLink } from './serial.js';
import { SpoolTransport } from './spool.js';
import { TcpLink } from './tcp.js';
import { UsbTransport } from './usb.js';
import type { ByteLink, PrinterTransport } from './types.js';

export function createLink(
  config: { type: 'serial'; path: string; baudRate: number } | { type: 'tcp'; host: string; port: number },
): ByteLink {
  return config.type === 'serial'
    ? new SerialLink({ path: config.path, baudRate: config.baudRate })
    : new TcpLink({ host: config.host, port: config.port });
}

export function createTransport(config: TransportConfig, language: 'zpl' | 'pdf'): PrinterTransport {
  switch (config.type) {
    case 'serial':
    case 'tcp':
      return new LineTransport(config.type, createLink(config));
    case 'usb':
      return new UsbTransport(config);
    case 'cups':
      return new CupsTransport({ queue: config.queue, command: config.command, options: config.options });
    case 'spool':
      return new SpoolTransport({ dir: config.dir, extension: language });
  }
}
