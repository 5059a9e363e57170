export * from './dispatcher.js';
export * from './outbox.js';
