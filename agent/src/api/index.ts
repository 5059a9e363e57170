export * from './http.js';
export * from './client.js';
