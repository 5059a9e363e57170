export * from './document.js';
export * from './routes.js';
