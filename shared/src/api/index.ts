export * from './error-codes.js';
export * from './scopes.js';
