/** Bulk product ingest: streamed uploads (CSV, JSON, NDJSON), a job table, and the worker that commits rows. */
export { CsvParser, CsvSyntaxError } from './csv.js';
export { JsonItemsParser, NdjsonParser, JsonSyntaxError } from './json-items.js';
export { INGEST_FORMATS, type IngestFormat } from './rows.js';
export { INGEST_LIMITS } from './upload.js';
export { ingestRoutes, type IngestRouteDeps } from './routes.js';
export { IngestWorker, type IngestWorkerOptions, type RunResult } from './worker.js';
