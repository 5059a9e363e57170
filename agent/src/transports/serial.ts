/**
 * A serial line (serialport). Opened lazily, reopened after a drop (a USB adapter re-enumerating under
 * a stable udev link, or socat restarted by the simulator). `SerialPort.list()` is never called.
 */
import { SerialPort } from 'serialport';
import { AgentError } from '../errors.js';
import { TypedEvents } from '@dpp/shared';
import type { ByteLink, LinkEvents } from './types.js';

export interface SerialLinkOptions {
  path: string;
  baudRate: number;
}

export class SerialLink implements ByteLink {
  readonly events = new TypedEvents<LinkEvents>();
  private port: SerialPort | null = null;
  private opening: Promise<void> | null = null;

  constructor(private readonly options: SerialLinkOptions) {}

  get target(): string {
    return this.options.path;
  }

  get isOpen(): boolean {
    return this.port?.isOpen ?? false;
  }

  open(): Promise<void> {
    if (this.isOpen) return Promise.resolve();
    this.opening ??= this.doOpen().finally(() => (this.opening = null));
    return this.opening;
  }

  private async doOpen(): Promise<void> {
    const port = new SerialPort({
      path: this.options.path,
      baudRate: this.options.baudRate,
      autoOpen: false,
    });
    await new Promise<void>((resolve, reject) =>
      port.open((err) =>
        err
          ? reject(
              new AgentError('TRANSPORT_ERROR', `cannot open ${this.options.path}: ${err.message}`, {
                cause: err,
              }),
            )
          : resolve(),
      ),
    );
    port.on('data', (chunk: Buffer) => this.events.emit('data', chunk));
    port.on('error', () => {}); // a hang-up also closes the port; 'close' reports it
    port.on('close', () => {
      if (this.port === port) this.port = null;
      this.events.emit('close');
    });
    this.port = port;
  }

  async write(data: Buffer): Promise<void> {
    await this.open();
    const port = this.port;
    if (!port) throw new AgentError('TRANSPORT_CLOSED', `${this.target} closed`);
    await new Promise<void>((resolve, reject) => {
      const onClose = () => reject(new AgentError('TRANSPORT_CLOSED', `${this.target} closed while writing`));
      port.once('close', onClose);
      port.write(data, (err) => {
        if (err) {
          port.off('close', onClose);
          reject(
            new AgentError('TRANSPORT_ERROR', `write to ${this.target}: ${err.message}`, { cause: err }),
          );
          return;
        }
        port.drain((drainErr) => {
          port.off('close', onClose);
          if (drainErr)
            reject(new AgentError('TRANSPORT_ERROR', `drain ${this.target}: ${drainErr.message}`));
          else resolve();
        });
      });
    });
  }

  async close(): Promise<void> {
    await this.opening?.catch(() => undefined);
    const port = this.port;
    this.port = null;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }
}
