/**
 * The one transport interface for printers, so the real line, the simulator and a test double are handed
 * in interchangeably (node-serialport's injected binding is the model). Serial, raw TCP and USB are two-way
 * lines (`ByteLink`): the printer answers status queries and `^HV` on them. CUPS and a spool folder are
 * one-way: bytes go out, nothing comes back.
 */
import type { TypedEvents } from '@dpp/shared';

export type TransportKind = 'serial' | 'tcp' | 'usb' | 'cups' | 'spool';

export type LinkEvents = {
  data: [chunk: Buffer];
  /** The line dropped (or was closed); the next `open()`/`write()` reopens it. */
  close: [];
};

/** A two-way byte line to a device (printer or scanner). */
export interface ByteLink {
  /** Where it goes: a device path, host:port, or usb:<serial number>. */
  readonly target: string;
  readonly isOpen: boolean;
  readonly events: TypedEvents<LinkEvents>;
  /** Opens the line if it is not open (idempotent; reopens after a drop). */
  open(): Promise<void>;
  /** Writes and resolves once the bytes have left (drained); opens the line first if needed. */
  write(data: Buffer): Promise<void>;
  close(): Promise<void>;
}

/** What identifies one submission: a CUPS job id, a spool file name, the device path or address. */
export interface SendReceipt {
  reference: string;
  bytes: number;
}

export interface PrinterTransport {
  readonly kind: TransportKind;
  readonly target: string;
  /** The two-way line when the printer can answer on it (serial, tcp, usb); null when it cannot. */
  readonly link: ByteLink | null;
  /** Submits one payload; `name` names it (a job title, a file name). */
  send(data: Buffer, name: string): Promise<SendReceipt>;
  close(): Promise<void>;
}
