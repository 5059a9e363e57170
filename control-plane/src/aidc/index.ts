export * from './claim.js';
export * from './jobs.js';
export * from './model.js';
export * from './port.js';
export * from './reaper.js';
export * from './refusal.js';
export {
  type Reporter,
  type ResultDeps,
  type ResultInput,
  type ResultOutcome,
  reportResult,
} from './result.js';
export { type BatchedOutcome, type BatchedResult, reportResults } from './result-batch.js';
export * from './routes.js';
