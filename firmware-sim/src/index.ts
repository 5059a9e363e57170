/**
 * @dpp/firmware-sim: a simulated ZPL label printer with RFID (and optionally NFC) encoder, and a scanner, on a real pty
 * or TCP port, with fault injection. This file is the package's only public door.
 */
export { startPrinter, type StartPrinterOptions, type PrinterHandle } from './printer/start-printer.js';
export type { PrintedLabel, PrinterEvents } from './printer/types.js';
export {
  FAST_RFID_PRINTER_MECHANICS,
  RFID_PRINTER_MECHANICS,
  encodeMs,
  labelMs,
  mechanicalLimit,
  printMs,
  type PrinterMechanics,
} from './printer/mechanics.js';
export { startScanner, type StartScannerOptions, type ScannerHandle } from './scanner/start-scanner.js';
export type { ScanResult } from './scanner/scanner.js';
export { decodeQrPng } from './scanner/decode.js';
export { decodeSymbolsPng, type SymbolDecode } from './scanner/symbols.js';
export {
  FAULT_NAMES,
  LABEL_FAULTS,
  PRINTER_CONDITIONS,
  defaultWrongContent,
  type FaultControl,
  type FaultName,
  type LabelFault,
  type PrinterCondition,
} from './faults/index.js';
export type { DeviceConnection, DeviceTransport, TransportAddress, Clock } from './transports/index.js';
export { PtyTransport, TcpTransport } from './transports/index.js';
export { ZebrashRenderer, type LabelRenderer, type LabelSize } from './render/index.js';
export { SimError, type SimErrorCode } from './errors.js';
export { jsonLineLogger, silentLogger, type SimLogger } from './log.js';
export { TypedEvents } from '@dpp/shared';
export { openHostLink, type HostLink } from './testing/host-link.js';
