export type {
  DeviceConnection,
  DeviceTransport,
  TransportAddress,
  ConnectionEvents,
  TransportEvents,
} from './types.js';
export type { Clock } from './clock.js';
export { realClock } from './clock.js';
export { Pacer, BITS_PER_BYTE } from './pacer.js';
export { PacedConnection } from './paced-connection.js';
export { PtyTransport, type PtyTransportOptions } from './pty-transport.js';
export { TcpTransport, type TcpTransportOptions } from './tcp-transport.js';
