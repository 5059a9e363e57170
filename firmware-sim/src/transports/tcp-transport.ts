/**
 * The simulated device on raw TCP (port 9100 on a real printer). Every accepted socket is one
 * connection; dropping it destroys the socket while the server keeps listening, so the host can
 * reconnect.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { TypedEvents } from '@dpp/shared';
import { silentLogger, type SimLogger } from '../log.js';
import type {
  ConnectionEvents,
  DeviceConnection,
  DeviceTransport,
  TransportAddress,
  TransportEvents,
} from './types.js';

export interface TcpTransportOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  log?: SimLogger;
}

class SocketConnection implements DeviceConnection {
  readonly events = new TypedEvents<ConnectionEvents>();
  private isClosed = false;

  constructor(
    readonly id: string,
    private readonly socket: Socket,
  ) {
    socket.on('data', (chunk: Buffer) => this.events.emit('data', chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.isClosed = true;
      this.events.emit('close');
    });
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Resolves once written, or as soon as the socket closes. */
  write(data: Buffer): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    return new Promise((resolve) => {
      const off = this.events.once('close', () => resolve());
      this.socket.write(data, () => {
        off();
        resolve();
      });
    });
  }

  drop(): void {
    this.socket.destroy();
  }
}

export class TcpTransport implements DeviceTransport {
  readonly events = new TypedEvents<TransportEvents>();
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private port = 0;
  private count = 0;
  private readonly log: SimLogger;

  constructor(private readonly options: TcpTransportOptions = {}) {
    this.log = (options.log ?? silentLogger).child('tcp');
  }

  get address(): TransportAddress {
    return { kind: 'tcp', host: this.options.host ?? '127.0.0.1', port: this.port };
  }

  async start(): Promise<void> {
    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      const conn = new SocketConnection(`tcp-${++this.count}`, socket);
      this.log.info('host connected', {
        remote: `${socket.remoteAddress}:${socket.remotePort}`,
        id: conn.id,
      });
      this.events.emit('connection', conn);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    this.port = typeof addr === 'object' && addr !== null ? addr.port : 0;
    this.log.info('listening', { port: this.port });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
