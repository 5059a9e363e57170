/** The control plane's public door, for the composition root, tests and benchmarks. */
export { API_VERSION, buildApp } from './app.js';
export { loadConfig, ConfigError, type Config } from './config/index.js';
export { startControlPlane, type ControlPlane, type StartOptions } from './server.js';
export { openStore, uuidv7, type Store } from './store/index.js';
export { recordEvent, type DomainEvent } from './events/index.js';
