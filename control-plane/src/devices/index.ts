export * from './devices.js';
export * from './routes.js';
export * from './statement.js';
