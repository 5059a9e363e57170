import type { EpcSchemePreference } from '@dpp/shared';
import type { ProductTable } from '../store/index.js';

/**
 * Identification granularity. `model`: one record per trade item (GTIN unique per tenant, api-v2.md
 * DUPLICATE_GTIN). `batch` and `item`: one record per lot or per serialized unit, unique per GTIN and
 * serialNumber (409 DUPLICATE_SERIAL); they may share a GTIN with each other and with the model record.
 */
export const GRANULARITIES = ['model', 'batch', 'item'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/**
 * Digits of the GS1 Company Prefix in the product's GTIN when none is given. The SGTIN-96 codec takes it
 * from the product (GS1 TDS §14.5.1 partition table); 7 is the most common length.
 */
export const DEFAULT_COMPANY_PREFIX_LENGTH = 7;

/**
 * Lifecycle stages named by api-v2.md (States: Product lifecycle; dpp_issued and archived are named by
 * the publish rule). Only the moves in {@link STAGE_TRANSITIONS} are made through the API.
 */
export const LIFECYCLE_STAGES = ['draft', 'validated', 'ready_for_dpp', 'dpp_issued', 'archived'] as const;
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number];

/**
 * Legal moves of POST /products/{id}/lifecycle/transition. Anything else is 422
 * INVALID_STATE_TRANSITION with `details.allowed`. The passports domain extends the machine beyond
 * ready_for_dpp through its own service calls, not through this route.
 */
export const STAGE_TRANSITIONS: Readonly<Record<string, readonly LifecycleStage[]>> = {
  draft: ['validated'],
  validated: ['ready_for_dpp'],
  ready_for_dpp: [],
};

/** `ready_for_dpp` -> `ReadyForDpp`: the capitalised form `status` shows (api-v2.md: "Draft"). */
export function pascalStage(stage: string): string {
  return stage
    .split('_')
    .map((p) => (p ? p[0]!.toUpperCase() + p.slice(1) : ''))
    .join('');
}

/** The status of a product: `Voided` once voided, else its stage capitalised (Draft, Validated, ...). */
export function productStatus(stage: string, voidedAt: string | null): string {
  return voidedAt ? 'Voided' : pascalStage(stage);
}

const statusKey = (s: string) => s.toLowerCase().replace(/_/g, '');

/** What a `status` filter value selects. */
export type StatusFilter = { voided: true } | { voided: false; stage: string };

/**
 * Reads one status filter value: the capitalised status (`ReadyForDpp`) or the stage name
 * (`ready_for_dpp`), case-insensitively; `Voided` selects voided products. Unknown values give undefined.
 */
export function parseStatusFilter(value: string): StatusFilter | undefined {
  const key = statusKey(value);
  if (key === 'voided') return { voided: true };
  const stage = LIFECYCLE_STAGES.find((s) => statusKey(s) === key);
  return stage ? { voided: false, stage } : undefined;
}

/** The product as the API shows it (read, list, versions' snapshots). */
export interface ProductView {
  id: string;
  productName: string;
  productDescription: string;
  category: string;
  jurisdiction: string;
  schemaId: string;
  schemaVersion: string;
  gtin: string;
  serialNumber: string;
  granularity: string;
  companyPrefixLength: number;
  /** The EPC scheme of its serials' tags (auto, sgtin-96, sgtin-198). */
  epcScheme: EpcSchemePreference;
  status: string;
  lifecycleStage: string;
  extensions: Record<string, unknown>;
  customData: Record<string, unknown> | null;
  version: number;
  everPublished: boolean;
  firstPublishedAt: string | null;
  inPrintLoop: boolean;
  printLoopEnteredAt: string | null;
  voidedAt: string | null;
  voidReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toProductView(row: ProductTable): ProductView {
  return {
    id: row.id,
    productName: row.name,
    productDescription: row.description,
    category: row.category,
    jurisdiction: row.jurisdiction,
    schemaId: row.schema_id,
    schemaVersion: row.schema_version,
    gtin: row.gtin,
    serialNumber: row.serial_number,
    granularity: row.granularity,
    companyPrefixLength: row.company_prefix_length,
    epcScheme: row.epc_scheme as EpcSchemePreference,
    status: productStatus(row.stage, row.voided_at),
    lifecycleStage: row.stage,
    extensions: JSON.parse(row.extensions) as Record<string, unknown>,
    customData: row.custom_data === null ? null : (JSON.parse(row.custom_data) as Record<string, unknown>),
    version: row.version,
    everPublished: row.published_at !== null,
    firstPublishedAt: row.published_at,
    inPrintLoop: row.print_loop_at !== null,
    printLoopEnteredAt: row.print_loop_at,
    voidedAt: row.voided_at,
    voidReason: row.void_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The lower-cased sort key of a name (sort=productName compares these, byte-wise). */
export const nameKey = (name: string): string => name.normalize('NFKC').toLowerCase();
