/** A raw TCP line (port 9100 on label printers), connected lazily and reconnected after a drop. */
import net from 'node:net';
import { AgentError } from '../errors.js';
import { TypedEvents } from '@dpp/shared';
import type { ByteLink, LinkEvents } from './types.js';

export interface TcpLinkOptions {
  host: string;
  port: number;
  connectTimeoutMs?: number;
}

export class TcpLink implements ByteLink {
  readonly events = new TypedEvents<LinkEvents>();
  private socket: net.Socket | null = null;
  private opening: Promise<void> | null = null;

  constructor(private readonly options: TcpLinkOptions) {}

  get target(): string {
    return `${this.options.host}:${this.options.port}`;
  }

  get isOpen(): boolean {
    return this.socket !== null && !this.socket.destroyed;
  }

  open(): Promise<void> {
    if (this.isOpen) return Promise.resolve();
    this.opening ??= this.connect().finally(() => (this.opening = null));
    return this.opening;
  }

  private connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.options.host, port: this.options.port });
      socket.setNoDelay(true);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new AgentError('TRANSPORT_ERROR', `connect ${this.target}: timed out`));
      }, this.options.connectTimeoutMs ?? 5000);
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(new AgentError('TRANSPORT_ERROR', `connect ${this.target}: ${err.message}`, { cause: err }));
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        socket.on('error', () => {}); // 'close' follows and reports it
        socket.on('data', (chunk: Buffer) => this.events.emit('data', chunk));
        socket.on('close', () => {
          if (this.socket === socket) this.socket = null;
          this.events.emit('close');
        });
        this.socket = socket;
        resolve();
      });
    });
  }

  async write(data: Buffer): Promise<void> {
    await this.open();
    const socket = this.socket;
    if (!socket) throw new AgentError('TRANSPORT_CLOSED', `${this.target} closed`);
    await new Promise<void>((resolve, reject) => {
      const onClose = () => reject(new AgentError('TRANSPORT_CLOSED', `${this.target} closed while writing`));
      socket.once('close', onClose);
      socket.write(data, (err) => {
        socket.off('close', onClose);
        if (err)
          reject(
            new AgentError('TRANSPORT_ERROR', `write to ${this.target}: ${err.message}`, { cause: err }),
          );
        else resolve();
      });
    });
  }

  async close(): Promise<void> {
    await this.opening?.catch(() => undefined);
    const socket = this.socket;
    this.socket = null;
    if (!socket || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.end();
      setTimeout(() => socket.destroy(), 500).unref();
    });
  }
}
