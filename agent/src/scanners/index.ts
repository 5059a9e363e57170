export * from './types.js';
export * from './line-scanner.js';
export * from './create.js';
