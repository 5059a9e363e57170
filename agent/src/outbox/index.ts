export * from './rows.js';
export * from './outbox.js';
