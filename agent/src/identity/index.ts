export * from './keys.js';
export * from './store.js';
export * from './enroll.js';
export * from './token-client.js';
