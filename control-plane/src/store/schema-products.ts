/** Tables of the products, product versions and ingest domains (migration 0002). */

export interface ProductTable {
  id: string;
  tenant_id: string;
  name: string;
  /** Lower-cased name, the sort key of `sort=productName`. */
  name_key: string;
  description: string;
  category: string;
  jurisdiction: string;
  /** The category schema version the extensions were last validated against. */
  schema_id: string;
  schema_version: string;
  /** 14 digits. */
  gtin: string;
  serial_number: string;
  /** `model`, `batch` or `item`. */
  granularity: string;
  company_prefix_length: number;
  /** `auto`, `sgtin-96` or `sgtin-198`: the EPC scheme of its serials (migration 0021). */
  epc_scheme: string;
  /** JSON object. */
  extensions: string;
  /** JSON object or null. */
  custom_data: string | null;
  /** Lifecycle stage: `draft`, `validated`, `ready_for_dpp` (later issues add more). */
  stage: string;
  version: number;
  voided_at: string | null;
  void_reason: string | null;
  /** First publication of a passport of this product; set by the passports domain. */
  published_at: string | null;
  /** First time a serial of this product entered the print loop; set by the carriers/AIDC domains. */
  print_loop_at: string | null;
  ingest_job_id: string | null;
  ingest_row: number | null;
  created_at: string;
  updated_at: string;
}

export interface ProductVersionTable {
  id: string;
  tenant_id: string;
  product_id: string;
  version: number;
  /** JSON: the product as the API shows it after this write. */
  snapshot: string;
  /** JSON array of API field names this write changed. */
  changed_fields: string;
  /** `created`, `updated`, `transitioned`, `voided`. */
  change: string;
  reason: string | null;
  actor_type: string;
  actor_id: string | null;
  correlation_id: string | null;
  created_at: string;
}

export interface IngestJobTable {
  id: string;
  tenant_id: string;
  /** `receiving`, `queued`, `processing`, `completed`, `failed`. */
  status: string;
  /** `csv`, `json` or `ndjson`. */
  format: string;
  idempotency_key: string | null;
  content_sha256: string | null;
  bytes: number;
  total_rows: number;
  processed_rows: number;
  created_count: number;
  failed_count: number;
  errors_stored: number;
  /** Why the job failed as a whole. */
  error: string | null;
  actor_type: string;
  actor_id: string | null;
  correlation_id: string | null;
  /** Fencing token of the worker holding the lease. */
  lease_owner: string | null;
  locked_until: string | null;
  attempts: number;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface IngestUploadChunkTable {
  job_id: string;
  seq: number;
  /** Decoded UTF-8 text of the upload, in order. */
  data: string;
}

export interface IngestErrorTable {
  job_id: string;
  row: number;
  code: string;
  message: string;
  field: string | null;
}
