export * from './types.js';
export * from './serial.js';
export * from './tcp.js';
export * from './line-transport.js';
export * from './cups.js';
export * from './spool.js';
export * from './create.js';
