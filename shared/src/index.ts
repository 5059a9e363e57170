/**
 * @dpp/shared: pure code both sides of the print floor use. No I/O lives here.
 * Each module has its own folder; this file is the package's only public door.
 */
export * from './api/index.js';
export * from './events/index.js';
export * from './errors/codec-error.js';
export * from './gs1/index.js';
export * from './epc/index.js';
export * from './nfc/index.js';
export * from './jcs/index.js';
export * from './webhooks/index.js';
export * from './did/index.js';
export * from './zpl/index.js';
export * from './scanner/index.js';
export * from './vc/index.js';
export * from './mqtt/index.js';
export * from './devices/index.js';
export * from './aidc/index.js';
export * from './ids/index.js';
export * from './collections/index.js';
