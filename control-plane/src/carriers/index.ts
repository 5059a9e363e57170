/** Carriers and the print loop: serial allocation, the print file, print outcomes, the AIDC port. */
export { carrierRoutes, type CarrierRouteDeps } from './routes.js';
export { carriersPrintLoop, findAllocatedSerial } from './print-loop.js';
export { labelCodes, type LabelCodes } from './codes.js';
export { batchSerials, registeredSerial, serialIs } from './serial-rows.js';
export {
  BATCH_MAX_COUNT,
  COUNTER_FORM,
  FAILED_CHUNK_SIZE,
  PRINT_STATES,
  PRINT_STATUS_MAX_RESULTS,
  SERIAL_LIMIT,
  type PrintState,
} from './model.js';
