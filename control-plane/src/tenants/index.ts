export * from './accounts.js';
export * from './api-keys.js';
export * from './routes.js';
export * from './seed.js';
export * from './tenants.js';
export * from './passwords.js';
export * from './slug.js';
