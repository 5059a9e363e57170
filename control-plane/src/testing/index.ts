export * from './harness.js';
export * from './store.js';
export * from './device.js';
export * from './journey.js';
export * from './print-device.js';
