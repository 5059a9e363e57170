export * from './carriers.js';
export * from './envelope.js';
export * from './evidence.js';
export * from './states.js';
export * from './wire.js';
export * from './proof.js';
