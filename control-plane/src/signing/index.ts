export * from './keyring.js';
export * from './routes.js';
