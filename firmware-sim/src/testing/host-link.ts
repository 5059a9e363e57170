/**
 * The host end of a simulated device, for tests: opens the pty with `serialport` or connects over
 * TCP, and parses what comes back with the shared parsers (printer answers and scanner lines).
 */
import { connect, type Socket } from 'node:net';
import {
  ScannerLineParser,
  ZplResponseParser,
  type HostVerificationFraming,
  type ScannerLineEvent,
  type ZplResponse,
} from '@dpp/shared';
import { SerialPort } from 'serialport';
import { SimError } from '../errors.js';

export type HostTarget = { path: string; baudRate?: number } | { host?: string; port: number };

export interface HostLink {
  write(data: string | Buffer): Promise<void>;
  /** The next printer answer of `kind` not yet taken (garbage is skipped unless asked for). */
  nextResponse<K extends ZplResponse['kind']>(
    kind: K,
    timeoutMs?: number,
  ): Promise<Extract<ZplResponse, { kind: K }>>;
  /** Sends `data`, then waits for the next answer of `kind`. */
  query<K extends ZplResponse['kind']>(
    data: string,
    kind: K,
    timeoutMs?: number,
  ): Promise<Extract<ZplResponse, { kind: K }>>;
  /** The next scanner line not yet taken (garbage skipped). */
  nextScan(timeoutMs?: number): Promise<Exclude<ScannerLineEvent, { kind: 'garbage' }>>;
  /** Every byte received so far. */
  received(): Buffer;
  /** Resolves when the device side closes the line. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

type Waiter = { test: () => boolean };

export async function openHostLink(
  target: HostTarget,
  options: { hostVerification?: HostVerificationFraming } = {},
): Promise<HostLink> {
  const zpl = new ZplResponseParser(
    options.hostVerification ? { hostVerification: options.hostVerification } : {},
  );
  const scans = new ScannerLineParser();
  const responses: ZplResponse[] = [];
  const lines: ScannerLineEvent[] = [];
  const chunks: Buffer[] = [];
  const waiters = new Set<Waiter>();
  let onClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (onClosed = resolve));

  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    responses.push(...zpl.push(chunk.toString('latin1')));
    lines.push(...scans.push(chunk.toString('utf8')));
    for (const w of [...waiters]) if (w.test()) waiters.delete(w);
  };

  const io =
    'path' in target
      ? await openSerial(target.path, target.baudRate ?? 115200, onData, () => onClosed())
      : await openSocket(target, onData, () => onClosed());

  function take<T>(list: T[], match: (x: T) => boolean, what: string, timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        test: () => {
          const i = list.findIndex(match);
          if (i < 0) return false;
          clearTimeout(timer);
          resolve(list.splice(i, 1)[0] as T);
          return true;
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new SimError('TIMEOUT', `no ${what} within ${timeoutMs} ms`, {
            details: { received: Buffer.concat(chunks).toString('latin1') },
          }),
        );
      }, timeoutMs);
      if (!waiter.test()) waiters.add(waiter);
    });
  }

  const link: HostLink = {
    write: io.write,
    nextResponse: (kind, timeoutMs = 5000) =>
      take(responses, (r) => r.kind === kind, kind, timeoutMs) as Promise<
        Extract<ZplResponse, { kind: typeof kind }>
      >,
    query: async (data, kind, timeoutMs) => {
      await io.write(data);
      return link.nextResponse(kind, timeoutMs);
    },
    nextScan: (timeoutMs = 5000) =>
      take(lines, (l) => l.kind !== 'garbage', 'scanner line', timeoutMs) as Promise<
        Exclude<ScannerLineEvent, { kind: 'garbage' }>
      >,
    received: () => Buffer.concat(chunks),
    closed,
    close: io.close,
  };
  return link;
}

interface Io {
  write(data: string | Buffer): Promise<void>;
  close(): Promise<void>;
}

async function openSerial(
  path: string,
  baudRate: number,
  onData: (b: Buffer) => void,
  onClose: () => void,
): Promise<Io> {
  const port = new SerialPort({ path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  port.on('data', onData);
  port.on('error', () => {});
  port.on('close', onClose);
  return {
    write: (data) =>
      new Promise((resolve) =>
        port.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data, () =>
          port.drain(() => resolve()),
        ),
      ),
    close: () => new Promise((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve())),
  };
}

async function openSocket(
  target: { host?: string; port: number },
  onData: (b: Buffer) => void,
  onClose: () => void,
): Promise<Io> {
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(target.port, target.host ?? '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  socket.on('data', onData);
  socket.on('error', () => {});
  socket.on('close', onClose);
  return {
    write: (data) =>
      new Promise((resolve) =>
        socket.write(typeof data === 'string' ? Buffer.from(data, 'latin1') : data, () => resolve()),
      ),
    close: () =>
      new Promise((resolve) => {
        if (socket.destroyed) return resolve();
        socket.once('close', () => resolve());
        socket.end();
        setTimeout(() => socket.destroy(), 200).unref();
      }),
  };
}
