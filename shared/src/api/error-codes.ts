/**
 * Every machine-readable error code the v2 API answers with, and its HTTP status.
 * Codes from `api-v2.md` (Errors) are kept exactly; codes the spec leaves open are ours and are
 * marked so in the OpenAPI document. A status the spec lists with "no code" (401, plain 404, 405,
 * some 409) is rendered without a `code` field, so it does not appear here.
 *
 * @example
 * errorStatus('STALE_ATTEMPT') // 409
 */
export const ERROR_CODES = {
  // --- api-v2.md, Errors table ---
  API_SCOPE_DENIED: 403,
  FORBIDDEN: 403,
  SANDBOX_EXPIRED: 403,
  GUARD_REJECTED: 403,
  VALIDATION_ERROR: 400,
  CALLBACK_URL_UNSUPPORTED: 400,
  INVALID_GTIN: 400,
  INVALID_SERIAL: 400,
  PRODUCT_NOT_FOUND: 404,
  PASSPORT_NOT_FOUND: 404,
  PASSPORT_AMBIGUOUS: 404,
  DUPLICATE_GTIN: 409,
  ALREADY_REVOKED: 409,
  INVALID_TRANSITION: 409,
  STALE_ATTEMPT: 409,
  PUBLISHED_PASSPORT_RETAINED: 409,
  PRODUCT_REFERENCED: 409,
  SERIAL_VOIDED: 410,
  PASSPORT_GONE: 410,
  EXTENSIONS_REQUIRED: 422,
  SCHEMA_NOT_FOUND: 422,
  INVALID_STATE_TRANSITION: 422,
  MISSING_REQUIRED_CREDENTIALS: 422,
  VALIDATION_CREDENTIAL_NOT_VERIFIED: 422,
  EUDIW_INCOMPATIBLE_DID_METHOD: 422,
  SERIAL_NOT_ALLOCATED: 422,
  PASSPORT_NOT_READY: 422,
  UNKNOWN_EVENT_TYPE: 422,
  RETIRED_EVENT_TYPE: 422,
  PASSPORT_NOT_PUBLISHABLE: 422,
  RATE_LIMITED: 429,
  ANCHORING_FAILED: 500,
  ISSUANCE_FAILED: 502,
  ISSUANCE_NOT_CONFIRMED: 502,
  COMPLIANCE_EVALUATION_UNAVAILABLE: 503,
  EIDAS_ACTOR_BINDING_UNAVAILABLE: 503,
  REGISTRY_UNAVAILABLE: 503,
  ANCHORING_UNAVAILABLE: 503,
  SECURITY_ADVISORY_FEED_UNAVAILABLE: 503,
  // --- ours, where the spec says "not shown" ---
  /** A route that requires an Idempotency-Key was called without one. */
  IDEMPOTENCY_KEY_REQUIRED: 400,
  /** The request body is larger than the documented maximum. */
  PAYLOAD_TOO_LARGE: 413,
  /** The request line (its URL) and headers exceed 16 KB together; answered before routing. */
  HEADERS_TOO_LARGE: 431,
  /** The request did not arrive in time (headers or body); answered before routing. */
  REQUEST_TIMEOUT: 408,
  /** A body was sent with a Content-Type other than application/json. */
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** A serial already has a print job that is not finished (or is SEALED); details.jobRef names it. */
  PRINT_JOB_EXISTS: 409,
  /** Print evidence that contradicts the job (another link or EPC, a bundle that does not verify). */
  EVIDENCE_REJECTED: 422,
  /** A print result after the attempt's lease (and so its envelope) expired. */
  ENVELOPE_EXPIRED: 410,
  /** An unexpected fault on our side; the correlation id identifies it in our logs. */
  INTERNAL_ERROR: 500,
  /** The service is shutting down or its store is unreachable; retry with backoff. */
  SERVICE_UNAVAILABLE: 503,
  /**
   * An item- or batch-granularity product with the same GTIN and serialNumber already exists in the
   * tenant (the item-level counterpart of DUPLICATE_GTIN, which covers model granularity).
   */
  DUPLICATE_SERIAL: 409,
  /**
   * GET /carriers/export: `printState` is not one of `printed`, `failed`, `pending` (the spec refuses an
   * unknown value with 422 and leaves its code open); details.allowed lists the values.
   */
  INVALID_PRINT_STATE: 422,
  /** POST /carriers/batch for a voided product: a voided item gets no new serials. */
  PRODUCT_VOIDED: 409,
  /**
   * POST /carriers/batch would take the tenant's serial counter past 2^38 - 1, the largest SGTIN-96
   * serial; details.available says how many serials remain.
   */
  SERIAL_SPACE_EXHAUSTED: 422,
  /**
   * POST /carriers/batch `serials`: serials the workspace already has (registered or allocated);
   * details.serials names them and nothing is registered.
   */
  SERIAL_ALREADY_ALLOCATED: 409,
  /**
   * POST /carriers/batch `serials`: serials of the form the workspace's counter hands out (decimal without a
   * leading zero), which only `count` allocates; details.serials names them.
   */
  SERIAL_RESERVED_FOR_COUNTER: 422,
  /**
   * POST /carriers/batch `serials` for a product whose epcScheme is sgtin-96: serials SGTIN-96 cannot hold
   * (not a decimal without leading zeros up to 2^38 - 1); details.serials names them.
   */
  SERIAL_NOT_SGTIN96: 422,
  /** No workspace goes by this public company slug (the security advisory feed). */
  COMPANY_NOT_FOUND: 404,
  /**
   * No label with this GTIN and serial was sealed, or its passport is not served publicly (a label proof
   * reveals nothing a published passport does not).
   */
  LABEL_PROOF_NOT_FOUND: 404,
  /** No security advisory with this id or tracking id in the workspace (or its public feed). */
  ADVISORY_NOT_FOUND: 404,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The HTTP status that goes with an error code. */
export function errorStatus(code: ErrorCode): number {
  return ERROR_CODES[code];
}

/** The error envelope every non-2xx JSON answer uses: `{ error: { code?, message, details? } }`. */
export interface ErrorEnvelope {
  error: { code?: ErrorCode | string; message: string; details?: Record<string, unknown> };
}
