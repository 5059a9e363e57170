export * from './broker.js';
export * from './embedded.js';
export * from './external.js';
export * from './notices.js';
