/**
 * @dpp/agent: the print-floor device agent. This file is the package's only public door.
 */
export * from './errors.js';
export * from './log.js';
export { TypedEvents, type EventMap } from '@dpp/shared';
export * from './config/index.js';
export * from './identity/index.js';
export * from './api/index.js';
export * from './envelope/index.js';
export * from './render/index.js';
export * from './transports/index.js';
export * from './printers/index.js';
export * from './scanners/index.js';
export * from './store/index.js';
export * from './outbox/index.js';
export * from './mqtt/index.js';
export * from './jobs/index.js';
export * from './console/index.js';
export * from './runtime/index.js';
export { main as runCli, USAGE as CLI_USAGE } from './cli/index.js';
export type { Output as CliOutput } from './cli/output.js';
