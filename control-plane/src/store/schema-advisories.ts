/** A security advisory a workspace published (migration 0013); `content` is its current JSON content. */
export interface SecurityAdvisoryTable {
  id: string;
  tenant_id: string;
  /** 1, 2, ... per workspace: the number in its tracking id. */
  seq: number;
  tracking_id: string;
  /** published or withdrawn. */
  state: string;
  version: number;
  content: string;
  initial_release_date: string;
  current_release_date: string;
  withdrawn_at: string | null;
  withdrawal_reason: string | null;
}

/** One version of an advisory as it was published; never updated. */
export interface SecurityAdvisoryRevisionTable {
  advisory_id: string;
  version: number;
  date: string;
  summary: string;
  content: string;
  actor_type: string;
  actor_id: string | null;
}

export interface AdvisoryTables {
  security_advisories: SecurityAdvisoryTable;
  security_advisory_revisions: SecurityAdvisoryRevisionTable;
}
