export { Scanner, type ScanResult, type ScanSource } from './scanner.js';
export { startScanner, type StartScannerOptions, type ScannerHandle } from './start-scanner.js';
export { decodeQrPng, type QrDecode } from './decode.js';
export { decodeSymbolsPng, type SymbolDecode } from './symbols.js';
