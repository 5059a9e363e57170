export * from './polling-loop.js';
