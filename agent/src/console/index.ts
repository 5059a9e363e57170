export * from './backend.js';
export * from './server.js';
export * from './pin.js';
export * from './sessions.js';
export * from './ui-files.js';
