/** The control plane's public door, for the composition root, tests and benchmarks. */
export { API_VERSION, buildApp } from './app.js';
export { loadConfig, ConfigError, type Config } from './config/index.js';
export { startControlPlane, type ControlPlane, type StartOptions } from './server.js';
export { openStore, uuidv7, type Store } from './store/index.js';
export { recordEvent, type DomainEvent } from './events/index.js';
export { createApiKey, type SeedFile } from './tenants/index.js';
export type { MailMessage, Mailer } from './mail/index.js';
export type { DeliveryTuning } from './webhooks/index.js';
// The demo's way of driving the API, which tests and benchmarks drive it by too.
export {
  type ApiCaller,
  type CallOptions,
  type CallResult,
  type HttpTransport,
  type PrintableProduct,
  demoProductBody,
  freshGtin,
  httpCaller,
  keepAliveTransport,
  printableProduct,
  validationCredential,
} from './demo/journey.js';
export { freePort } from './demo/ports.js';
// The transparency log's tree, for tests and tools that check its proofs.
export {
  LogIntegrityError,
  appendNodes,
  leafHash,
  memoryReader,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from './transparency/index.js';
