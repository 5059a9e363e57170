/** EPCIS 2.0: capture and query of JSON-LD events, and the commissioning event the print loop records. */
export { commissioningEvent } from './commissioning.js';
export { EPCIS_EVENT_TYPES, EpcisDocumentSchema, EpcisEventSchema, type EpcisEvent } from './schemas.js';
export { EPCIS_CONTEXT, recordEpcisEvents, queryEpcisEvents, type RecordOptions } from './store.js';
export { epcisRoutes, type EpcisRouteDeps } from './routes.js';
