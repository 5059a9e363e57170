export * from './payloads.js';
export * from './topics.js';
