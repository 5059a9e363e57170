/** ZPL wire code both sides need: tokenizer, writer, host status frames. Pure, no I/O. */
export * from './errors.js';
export * from './tokenizer.js';
export * from './field-data.js';
export * from './field-hex.js';
export * from './writer.js';
export * from './host-status.js';
export * from './error-status.js';
export * from './printer-status.js';
export * from './host-verification.js';
export * from './response-parser.js';
export * from './symbols.js';
