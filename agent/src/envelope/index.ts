export * from './jwks.js';
export * from './verify.js';
