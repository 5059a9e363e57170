export * from './routes.js';
export * from './tokens.js';
