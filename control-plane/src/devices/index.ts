export * from './devices.js';
export * from './routes.js';
