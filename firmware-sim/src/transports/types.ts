/**
 * Device-side transports behind one interface (STYLE principle 2): the printer and the scanner only
 * see {@link DeviceConnection}s, whether the bytes travel over a pty made by socat, a TCP socket, or
 * a test fake handed in through the options.
 */
import type { TypedEvents } from '@dpp/shared';

/** Events of one connection. */
export type ConnectionEvents = {
  data: [chunk: Buffer];
  close: [];
};

/** One open line between the host and the simulated device. */
export interface DeviceConnection {
  readonly id: string;
  readonly events: TypedEvents<ConnectionEvents>;
  readonly closed: boolean;
  /** Sends bytes to the host; resolves once they are on the line. */
  write(data: Buffer): Promise<void>;
  /** Drops the line the way a pulled cable would (the fault "disconnect mid-job"). */
  drop(): void;
}

/** Where the host finds the device. */
export type TransportAddress = { kind: 'pty'; path: string } | { kind: 'tcp'; host: string; port: number };

/** Events of a transport. */
export type TransportEvents = {
  connection: [connection: DeviceConnection];
};

/** A way for the host to reach the device. */
export interface DeviceTransport {
  readonly events: TypedEvents<TransportEvents>;
  /** Valid once {@link start} resolved. */
  readonly address: TransportAddress;
  start(): Promise<void>;
  /** Closes every connection and frees the pty or port. */
  close(): Promise<void>;
}
