export * from './harness.js';
export * from './store.js';
export * from './device.js';
export * from './print-device.js';
export {
  type ApiCaller,
  type CallOptions,
  type CallResult,
  type PrintableProduct,
  freePort,
  freshGtin,
  httpCaller,
  printableProduct,
  validationCredential,
} from '@dpp/control-plane';
