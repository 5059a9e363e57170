export * from './link.js';
export * from './login.js';
