/**
 * The generation request table: each state change is one guarded statement that checks the lease owner
 * (the fencing token), so a worker that lost its lease cannot write over the one that took the job.
 */
import { sql } from 'kysely';
import type { Db, PassportGenerationTable } from '../store/index.js';
import { type Lease, type LeaseColumns, claim, finish, release, renew } from '../queue/index.js';

/** The six stages of POST /dpp/generate, in order (api-v2.md: "the 6-stage pipeline"). */
export const GENERATION_STAGES = [
  { name: 'load_product', title: 'Load the product and check it is ready_for_dpp' },
  { name: 'check_schema', title: 'Check the effective schema and data completeness' },
  { name: 'resolve_credentials', title: 'Resolve the credentials the category requires' },
  { name: 'assemble_content', title: 'Assemble the passport content sections' },
  { name: 'sign_credential', title: "Sign the passport credential with the tenant's issuer key" },
  { name: 'persist_passport', title: 'Confirm the credential and persist the passport' },
] as const;
export type StageName = (typeof GENERATION_STAGES)[number]['name'];

export type GenerationStatus = 'queued' | 'running' | 'succeeded' | 'failed';
export type StageStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';

export interface StageRecord {
  name: StageName;
  status: StageStatus;
  startedAt: string | null;
  finishedAt: string | null;
  error?: { code: string; message: string };
}

export interface GenerationError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

export function initialStages(): StageRecord[] {
  return GENERATION_STAGES.map((s) => ({
    name: s.name,
    status: 'pending',
    startedAt: null,
    finishedAt: null,
  }));
}

export async function insertGeneration(db: Db, row: PassportGenerationTable): Promise<void> {
  await db.insertInto('passport_generations').values(row).execute();
}

export async function getGeneration(
  db: Db,
  tenantId: string,
  id: string,
): Promise<PassportGenerationTable | undefined> {
  return db
    .selectFrom('passport_generations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The request of a product that is still queued or running, if any: a product generates once at a time. */
export async function activeGeneration(
  db: Db,
  tenantId: string,
  productId: string,
): Promise<PassportGenerationTable | undefined> {
  return db
    .selectFrom('passport_generations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .where('status', 'in', ['queued', 'running'])
    .orderBy('created_at')
    .executeTakeFirst();
}

/** Where generation requests keep their lease. */
const GENERATION_QUEUE: LeaseColumns<'passport_generations'> = {
  table: 'passport_generations',
  id: 'id',
  owner: 'lease_owner',
  lockedUntil: 'locked_until',
  attempts: 'attempts',
  order: 'created_at',
};

/** Claims the oldest request that is queued, or running with an expired lease (its worker died), for `owner`. */
export async function claimGeneration(
  db: Db,
  opts: { now: number; leaseMs: number; owner: string },
): Promise<PassportGenerationTable | undefined> {
  const now = new Date(opts.now).toISOString();
  const [job] = await claim(db, GENERATION_QUEUE, {
    ...opts,
    due: (eb) => eb('status', 'in', ['queued', 'running']),
    set: (eb) => ({
      status: 'running',
      started_at: eb.fn.coalesce('started_at', sql.lit(now)),
      updated_at: now,
    }),
  });
  return job;
}

export type { Lease };

/** Records stage progress and renews the lease; false when the lease was lost. */
export async function recordStages(
  db: Db,
  lease: Lease,
  p: { stage: StageName; stages: StageRecord[]; warnings: unknown[]; now: number; leaseMs: number },
): Promise<boolean> {
  const renewed = await renew(db, GENERATION_QUEUE, lease, {
    now: p.now,
    leaseMs: p.leaseMs,
    set: () => ({
      stage: p.stage,
      stages: JSON.stringify(p.stages),
      warnings: JSON.stringify(p.warnings),
      updated_at: new Date(p.now).toISOString(),
    }),
    where: (eb) => eb('status', '=', 'running'),
  });
  return renewed !== undefined;
}

/** Ends a request (succeeded with a result, or failed with an error); false when the lease was lost. */
export async function finishGeneration(
  db: Db,
  lease: Lease,
  p: {
    status: 'succeeded' | 'failed';
    stage: StageName;
    stages: StageRecord[];
    warnings: unknown[];
    error: GenerationError | null;
    result: Record<string, unknown> | null;
    now: number;
  },
): Promise<boolean> {
  const at = new Date(p.now).toISOString();
  return finish(db, GENERATION_QUEUE, lease, {
    set: {
      status: p.status,
      stage: p.stage,
      stages: JSON.stringify(p.stages),
      warnings: JSON.stringify(p.warnings),
      error: p.error ? JSON.stringify(p.error) : null,
      result: p.result ? JSON.stringify(p.result) : null,
      updated_at: at,
      finished_at: at,
    },
    where: (eb) => eb('status', '=', 'running'),
  });
}

/** Hands a request back after an unexpected fault, to be claimed again at `availableAt`. */
export async function releaseGeneration(db: Db, lease: Lease, availableAt: string): Promise<void> {
  await release(db, GENERATION_QUEUE, lease, { retryAt: Date.parse(availableAt) });
}
