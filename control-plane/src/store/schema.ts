import type { AdvisoryTables } from './schema-advisories.js';
import type { AidcTables } from './schema-aidc.js';
import type { ComplianceTables } from './schema-compliance.js';
import type { CarrierTables } from './schema-carriers.js';
import type { PassportTables } from './schema-passports.js';
import type {
  DeviceKeyTable,
  DeviceTable,
  EnrollmentTokenTable,
  OauthAssertionTable,
  SigningKeyTable,
} from './schema-devices.js';
import type {
  IngestErrorTable,
  IngestJobTable,
  IngestUploadChunkTable,
  ProductTable,
  ProductVersionTable,
} from './schema-products.js';
import type {
  WebhookDeliveryAttemptTable,
  WebhookDeliveryTable,
  WebhookEndpointTable,
} from './schema-webhooks.js';

export type * from './schema-webhooks.js';
export type * from './schema-products.js';

/**
 * Table types of the store. Portable across SQLite and PostgreSQL: ids are uuid text, timestamps are
 * ISO 8601 UTC text (lexically ordered), JSON is text, booleans are 0/1 integers.
 */
export interface TenantTable {
  id: string;
  name: string;
  /** The public company slug (migration 0012; tenants/slug.ts). */
  slug: string;
  tier: string;
  sandbox: number;
  sandbox_expires_at: string | null;
  created_at: string;
}

export interface UserTable {
  id: string;
  tenant_id: string;
  email: string;
  password_hash: string;
  role: string;
  created_at: string;
}

export interface SessionTable {
  id: string;
  user_id: string;
  tenant_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
}

export interface ApiKeyTable {
  id: string;
  tenant_id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  scopes: string;
  created_at: string;
  revoked_at: string | null;
  rotated_from: string | null;
  last_used_at: string | null;
}

export interface IdempotencyKeyTable {
  tenant_id: string;
  route: string;
  key: string;
  request_hash: string;
  state: string;
  response_status: number | null;
  response_body: string | null;
  response_headers: string | null;
  locked_at: string;
  created_at: string;
  expires_at: string;
}

export interface OutboxTable {
  id: string;
  tenant_id: string | null;
  topic: string;
  payload: string;
  created_at: string;
  available_at: string;
  attempts: number;
  locked_until: string | null;
  last_error: string | null;
  processed_at: string | null;
}

export interface EventTable {
  id: string;
  tenant_id: string;
  type: string;
  resource_type: string | null;
  resource_id: string | null;
  data: string;
  correlation_id: string | null;
  occurred_at: string;
}

export interface AuditLogTable {
  id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  resource_type: string | null;
  resource_id: string | null;
  correlation_id: string | null;
  details: string | null;
  occurred_at: string;
}

/** Rate windows shared by replicas (migration 0008). `started_ms` is Unix ms (a string from PostgreSQL's bigint). */
export interface RateWindowTable {
  tenant_id: string;
  started_ms: number | string;
  used: number;
}

export interface Database
  extends AdvisoryTables, AidcTables, CarrierTables, ComplianceTables, PassportTables {
  rate_windows: RateWindowTable;
  tenants: TenantTable;
  users: UserTable;
  sessions: SessionTable;
  api_keys: ApiKeyTable;
  idempotency_keys: IdempotencyKeyTable;
  outbox: OutboxTable;
  events: EventTable;
  audit_log: AuditLogTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptTable;
  signing_keys: SigningKeyTable;
  enrollment_tokens: EnrollmentTokenTable;
  devices: DeviceTable;
  device_keys: DeviceKeyTable;
  oauth_assertions: OauthAssertionTable;
  products: ProductTable;
  product_versions: ProductVersionTable;
  ingest_jobs: IngestJobTable;
  ingest_upload_chunks: IngestUploadChunkTable;
  ingest_errors: IngestErrorTable;
}
