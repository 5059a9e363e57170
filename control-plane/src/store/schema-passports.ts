/** Tables of the passports domain (migration 0004). JSON columns are text; timestamps ISO 8601 UTC. */

/** One passport per product: the public uid is the product id. Created by the first generation. */
export interface PassportTable {
  product_id: string;
  tenant_id: string;
  /** Command lifecycle state: draft, submitted, approved, published, suspended, revoked, archived, recycled. */
  state: string;
  /** Audience set by PASSPORT.PUBLISH: public, partner or internal (public until then). */
  disclosure_tier: string;
  /** JSON object: the working content, section name -> section; the next version is minted from it. */
  content: string;
  /** JSON object: section name -> disclosure tier of the section (public when absent). */
  section_tiers: string;
  generated_at: string;
  generation_request_id: string;
  /** JSON: the credential issued by the last generation (signed by the tenant's issuer key). */
  generated_credential: string;
  /** The product version the last generation read. */
  generated_product_version: number;
  /** 0 until the first POST /dpp/{productId}/publish. */
  current_version: number;
  current_version_id: string | null;
  current_hash: string | null;
  first_published_at: string | null;
  /** Replacement passport recorded by PASSPORT.REVOKE (the successor-version link of a 410). */
  successor_id: string | null;
  state_changed_at: string;
  created_at: string;
  updated_at: string;
}

/** An immutable published version; versions of one passport form a hash chain. */
export interface PassportVersionTable {
  id: string;
  tenant_id: string;
  product_id: string;
  version: number;
  previous_version_id: string | null;
  previous_hash: string | null;
  /** JSON object of sections. */
  content: string;
  /** JSON object: section -> tier, as of this version. */
  section_tiers: string;
  content_hash: string;
  merkle_root: string;
  hash: string;
  amendment_reason: string;
  published_at: string;
  actor_type: string;
  actor_id: string | null;
  correlation_id: string | null;
}

/** A POST /dpp/generate request and its progress through the six stages. */
export interface PassportGenerationTable {
  id: string;
  tenant_id: string;
  product_id: string;
  /** queued, running, succeeded, failed. */
  status: string;
  /** The stage running or last run; null while queued. */
  stage: string | null;
  /** JSON array of { name, status, startedAt, finishedAt, error? }. */
  stages: string;
  /** JSON: strictness, region, lifecycleStage, dppOptions. */
  options: string;
  /** JSON array of warnings (advisory findings). */
  warnings: string;
  /** JSON { code, message, details } when failed. */
  error: string | null;
  /** JSON: what the request produced (content hash, merkle root, credential id). */
  result: string | null;
  sandbox: number;
  attempts: number;
  lease_owner: string | null;
  locked_until: string | null;
  actor_type: string;
  actor_id: string | null;
  correlation_id: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** An applied PASSPORT.* command; the envelope idempotencyKey is unique per tenant. */
export interface PassportCommandTable {
  id: string;
  tenant_id: string;
  product_id: string;
  type: string;
  idempotency_key: string;
  /** SHA-256 of the canonical envelope: a different body under the same key is a 409. */
  request_hash: string;
  from_state: string;
  to_state: string;
  /** JSON payload. */
  payload: string;
  /** JSON: the answer given, replayed for the same key. */
  result: string;
  actor_id: string;
  correlation_id: string;
  causation_id: string | null;
  requested_at: string;
  applied_at: string;
  principal_type: string;
  principal_id: string | null;
}

/** A validation-result credential anchored to a passport (VALIDATION_RESULT_ANCHORED). */
export interface PassportValidationTable {
  event_id: string;
  tenant_id: string;
  product_id: string;
  /** SHA-256 hex of the credential's RFC 8785 form. */
  digest: string;
  signature_algorithm: string;
  issuer: string;
  /** JSON array of the credential's `type` values. */
  credential_types: string;
  /** JSON: the credential as received. */
  credential: string;
  /** JSON, or null while nothing was anchored with the EU registry (no connector). */
  jrc_anchor: string | null;
  occurred_at: string;
}

/** The passport's lifecycle log (VALIDATION_RESULT_ANCHORED, VERSION_PUBLISHED, COMMAND_APPLIED, ...). */
export interface PassportLogTable {
  id: string;
  tenant_id: string;
  product_id: string;
  type: string;
  data: string;
  correlation_id: string | null;
  occurred_at: string;
}

/** A registered, resolvable Digital Link (POST /products/{id}/publish-dpp): one per product. */
export interface DppIdentifierTable {
  id: string;
  tenant_id: string;
  product_id: string;
  gtin: string;
  serial: string;
  digital_link: string;
  passport_type: string;
  version_id: string;
  version: number;
  merkle_root: string;
  /** JSON: the credential returned by publish-dpp for this version. */
  credential: string;
  publish_to_wallet: number;
  registered_at: string;
  updated_at: string;
}

/** The did:key each tenant signs passport credentials with, created on first use. */
export interface PassportIssuerKeyTable {
  tenant_id: string;
  did: string;
  /** base64url of the 32-byte Ed25519 seed. */
  private_seed: string;
  created_at: string;
}

/** One broadcast to external registries and the answer of each. */
export interface RegistryBroadcastTable {
  id: string;
  tenant_id: string;
  product_id: string;
  /** JSON array of registry names. */
  registries: string;
  /** JSON array of { registry, status, httpStatus, error }. */
  results: string;
  created_at: string;
}

/** One change of a passport item's market status; the newest row is the status (migration 0011). */
export interface PassportMarketStatusTable {
  id: string;
  tenant_id: string;
  product_id: string;
  /** placed_on_market, withdrawn or recalled. */
  status: string;
  reason: string | null;
  effective_at: string;
  recorded_at: string;
  actor_type: string;
  actor_id: string | null;
  correlation_id: string | null;
}

/** A passport version the EU registry accepted (registerDPP, migration 0014); never updated. */
export interface EuRegistryRegistrationTable {
  id: string;
  tenant_id: string;
  product_id: string;
  version_id: string;
  version: number;
  digital_link: string;
  /** The registry's own id of the registration, when it answered one. */
  registry_reference: string | null;
  registered_at: string;
  actor_type: string;
  actor_id: string | null;
}

export interface PassportTables {
  passports: PassportTable;
  passport_versions: PassportVersionTable;
  passport_generations: PassportGenerationTable;
  passport_commands: PassportCommandTable;
  passport_validations: PassportValidationTable;
  passport_log: PassportLogTable;
  dpp_identifiers: DppIdentifierTable;
  passport_issuer_keys: PassportIssuerKeyTable;
  registry_broadcasts: RegistryBroadcastTable;
  passport_market_status: PassportMarketStatusTable;
  eu_registry_registrations: EuRegistryRegistrationTable;
}
