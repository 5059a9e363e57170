export * from './agent.js';
export * from './views.js';
