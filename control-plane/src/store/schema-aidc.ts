/** Tables of the AIDC print-job domain (migration 0007). */
export interface PrintJobTable {
  job_ref: string;
  tenant_id: string;
  product_id: string;
  gtin: string;
  serial: string;
  digital_link: string;
  /** The SGTIN-96 hex; '' when the job's EPC is an SGTIN-198 (see migration 0021). */
  sgtin96_epc: string;
  /** `sgtin-96` or `sgtin-198` (migration 0021). */
  epc_scheme: string;
  /** The EPC the tag carries, 24 or 52 hex digits (migration 0021). */
  epc_hex: string;
  /** JSON LabelTemplate. */
  label_template: string;
  /** Printer name the job is bound to, or null for any printer of the tenant. */
  printer: string | null;
  /** 1 when the label encodes an RFID tag: only a printer with an encoder may claim it. */
  requires_rfid: number;
  /** 1 when the label carries an NFC tag: only a printer with an NFC encoder may claim it (migration 0021). */
  requires_nfc: number;
  state: string;
  /** The current attempt: the fencing token every result must carry. */
  attempt_id: string | null;
  attempt_count: number;
  max_attempts: number;
  device_id: string | null;
  lease_expires_at: string | null;
  /** When the current attempt's device said it was sending the label (see migration 0009); null before. */
  sending_at: string | null;
  last_error: string | null;
  created_by: string | null;
  correlation_id: string | null;
  created_at: string;
  updated_at: string;
  terminal_at: string | null;
}

export interface PrintAttemptTable {
  attempt_id: string;
  job_ref: string;
  tenant_id: string;
  device_id: string;
  printer: string;
  number: number;
  envelope_jti: string;
  /** The passport version printed (the product's published one at the claim); null before migration 0016. */
  passport_version_id: string | null;
  claimed_at: string;
  /** The state the attempt reached last. */
  state: string;
  ended_at: string | null;
  failure_reason: string | null;
}

export interface PrintEvidenceTable {
  id: string;
  job_ref: string;
  attempt_id: string;
  tenant_id: string;
  /** The state this evidence moved the job to. */
  state: string;
  kind: string;
  /** JSON. */
  payload: string;
  actor_type: string;
  actor_id: string | null;
  recorded_at: string;
}

export interface AidcTables {
  print_jobs: PrintJobTable;
  print_attempts: PrintAttemptTable;
  print_evidence: PrintEvidenceTable;
  seal_receipts: SealReceiptTable;
  log_nodes: LogNodeTable;
  log_tree_heads: LogTreeHeadTable;
  transparency_log: TransparencyLogTable;
}

/** The seal receipt of a SEALED job (migration 0017); only its place in the log is set, once. */
export interface SealReceiptTable {
  job_ref: string;
  tenant_id: string;
  gtin: string;
  serial: string;
  /** The compact JWS (typ dpp-seal-receipt+jws) signed by the control plane's key. */
  receipt: string;
  bundle_sha256: string;
  epcis_event_id: string | null;
  sealed_at: string;
  /** Its leaf in the transparency log; null until the sequencer appends it (migration 0019). */
  leaf_index: number | null;
}

/** A perfect subtree of the transparency log: level 0 holds the leaf hashes (hex). */
export interface LogNodeTable {
  level: number;
  node_index: number;
  hash: string;
}

/** A signed tree head of the transparency log. */
export interface LogTreeHeadTable {
  id: string;
  tree_size: number;
  root_hash: string;
  /** The compact JWS (typ dpp-tree-head+jws). */
  tree_head: string;
  signed_at: string;
}

/** The log's one row: its size, locked by the sequencer while it appends. */
export interface TransparencyLogTable {
  id: string;
  tree_size: number;
}
