export * from './types.js';
export * from './zpl-printer.js';
export * from './one-way-printer.js';
export * from './state.js';
export * from './create.js';
