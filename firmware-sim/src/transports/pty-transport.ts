/**
 * The simulated device on a real pty. socat makes the pair; the simulator opens the device end with
 * `serialport` and the host opens `<dir>/<name>-host`. Dropping the line kills socat (the host sees
 * its tty hang up) and starts a new one on the same link names, as a device re-enumerating under a
 * stable udev link would; the host must reopen it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { TypedEvents } from '@dpp/shared';
import { silentLogger, type SimLogger } from '../log.js';
import { startSocatPair, type SocatPair } from './socat.js';
import type {
  ConnectionEvents,
  DeviceConnection,
  DeviceTransport,
  TransportAddress,
  TransportEvents,
} from './types.js';

export interface PtyTransportOptions {
  /** Link name prefix: the host opens `<dir>/<name>-host`. */
  name: string;
  /** Folder of the links; a fresh temp folder (removed on close) when omitted. */
  dir?: string;
  log?: SimLogger;
}

class SerialConnection implements DeviceConnection {
  readonly events = new TypedEvents<ConnectionEvents>();
  private isClosed = false;

  constructor(
    readonly id: string,
    private readonly port: SerialPort,
    private readonly onDrop: () => void,
    log: SimLogger,
  ) {
    port.on('data', (chunk: Buffer) => this.events.emit('data', chunk));
    port.on('error', (err: Error) => log.debug('device end error', { err: err.message }));
    port.on('close', () => this.markClosed());
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Resolves once written, or as soon as the line closes (a dead line never calls back). */
  write(data: Buffer): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    return new Promise((resolve) => {
      const off = this.events.once('close', () => resolve());
      this.port.write(data, (err) => {
        if (err) {
          off();
          resolve();
          return;
        }
        this.port.drain(() => {
          off();
          resolve();
        });
      });
    });
  }

  drop(): void {
    this.onDrop();
  }

  markClosed(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    this.events.emit('close');
  }

  async close(): Promise<void> {
    if (this.port.isOpen) await new Promise<void>((resolve) => this.port.close(() => resolve()));
    this.markClosed();
  }
}

export class PtyTransport implements DeviceTransport {
  readonly events = new TypedEvents<TransportEvents>();
  private dir = '';
  private ownsDir = false;
  private socat: SocatPair | null = null;
  private connection: SerialConnection | null = null;
  private generation = 0;
  private closing = false;
  /** A line drop being handled; close() waits for it so no socat is left behind. */
  private reopening: Promise<void> = Promise.resolve();
  private readonly log: SimLogger;

  constructor(private readonly options: PtyTransportOptions) {
    this.log = (options.log ?? silentLogger).child('pty');
  }

  get address(): TransportAddress {
    return { kind: 'pty', path: this.hostPath };
  }

  /** The link the host opens. */
  get hostPath(): string {
    return join(this.dir, `${this.options.name}-host`);
  }

  async start(): Promise<void> {
    if (this.options.dir) this.dir = this.options.dir;
    else {
      this.dir = await mkdtemp(join(tmpdir(), 'dpp-sim-'));
      this.ownsDir = true;
    }
    await this.open();
  }

  private async open(): Promise<void> {
    const devPath = join(this.dir, `${this.options.name}-dev`);
    const socat = await startSocatPair(this.hostPath, devPath);
    const port = new SerialPort({ path: devPath, baudRate: 115200, autoOpen: false });
    try {
      await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    } catch (err) {
      await socat.kill();
      throw err;
    }
    if (this.closing) {
      await new Promise<void>((resolve) => port.close(() => resolve()));
      await socat.kill();
      return;
    }
    this.socat = socat;
    const id = `${this.options.name}-pty-${++this.generation}`;
    this.connection = new SerialConnection(id, port, () => this.dropLine(), this.log);
    this.log.info('pty ready', { path: this.hostPath, socatPid: this.socat.pid });
    this.events.emit('connection', this.connection);
  }

  /** Pulls the line: kills socat, then brings up a fresh pair on the same link names. */
  private dropLine(): void {
    this.reopening = this.reopening
      .then(() => this.replaceLine())
      .catch((err: unknown) => {
        this.log.warn('could not bring the pty back', { err: String(err) });
      });
  }

  private async replaceLine(): Promise<void> {
    const conn = this.connection;
    const socat = this.socat;
    if (!conn) return;
    this.connection = null;
    this.socat = null;
    this.log.info('line dropped', { path: this.hostPath });
    await Promise.all([conn.close(), socat?.kill()]);
    if (!this.closing) await this.open();
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.reopening;
    await Promise.all([this.connection?.close(), this.socat?.kill()]);
    this.connection = null;
    this.socat = null;
    if (this.ownsDir) await rm(this.dir, { recursive: true, force: true });
  }
}
