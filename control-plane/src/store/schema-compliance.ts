/** A regulation pack version a workspace published (migration 0015); never updated. */
export interface CompliancePackVersionTable {
  id: string;
  tenant_id: string;
  celex: string;
  version: string;
  effective_from: string;
  /** The pack version as published (compliance/pack-format.ts). */
  content: string;
  published_at: string;
  actor_type: string;
  actor_id: string | null;
}

/** One compliance evaluation of a product (migration 0015); never updated. */
export interface ComplianceEvaluationTable {
  id: string;
  tenant_id: string;
  product_id: string;
  sector: string;
  status: string;
  /** 0 to 100; null when the status is Unknown. */
  score: number | null;
  /** The whole answer: packs used, context, findings. */
  result: string;
  evaluated_at: string;
  actor_type: string;
  actor_id: string | null;
}

export interface ComplianceTables {
  compliance_pack_versions: CompliancePackVersionTable;
  compliance_evaluations: ComplianceEvaluationTable;
}
