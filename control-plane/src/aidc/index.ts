export * from './claim.js';
export * from './jobs.js';
export * from './model.js';
export * from './port.js';
export * from './reaper.js';
export * from './refusal.js';
export * from './result.js';
export * from './routes.js';
