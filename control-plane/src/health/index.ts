export * from './metrics.js';
export * from './routes.js';
