/** POST /dpp/generate: the checks made at once, then a queued request the worker runs. */
import { randomUUID } from 'node:crypto';
import { ApiError, actorOf, type Principal } from '../http/index.js';
import type { Db, PassportGenerationTable } from '../store/index.js';
import {
  GENERATION_STAGES,
  activeGeneration,
  initialStages,
  insertGeneration,
  type GenerationError,
  type StageRecord,
} from './generation-store.js';
import { assertCredentials, assertReadyForDpp, statusPath, type GenerationOptions } from './pipeline.js';
import { anchoredCredentials } from './queries.js';

export interface GenerateInput extends GenerationOptions {
  productId: string;
}

export interface GenerateDeps {
  db: Db;
  now: () => number;
  /** Called after a request is queued (wakes the worker). */
  onQueued?: () => void;
}

/**
 * Checks what can be known at once (the product is ready_for_dpp; anchoring can happen; the category's
 * required credentials are anchored) and queues the request. A product with a request still queued or
 * running gets that request back instead of a second one.
 */
export async function requestGeneration(
  deps: GenerateDeps,
  principal: Principal,
  input: GenerateInput,
  correlationId: string,
): Promise<PassportGenerationTable> {
  const tenantId = principal.tenant.id;
  const product = await deps.db
    .selectFrom('products')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', input.productId)
    .executeTakeFirst();
  if (!product) throw ApiError.notFound('Product');
  assertReadyForDpp(product);
  const sandbox = principal.tenant.sandbox;
  if (input.dppOptions?.anchorToBlockchain === true && !sandbox) {
    // No chain connector exists in this deployment; the sandbox ignores the flag (it never anchors).
    throw new ApiError(
      'ANCHORING_UNAVAILABLE',
      'No blockchain is configured; send anchorToBlockchain false or omit it',
      {
        details: { anchorToBlockchain: true, configured: false },
      },
    );
  }
  const anchored = await anchoredCredentials(deps.db, tenantId, product.id);
  assertCredentials(
    product.category,
    anchored.flatMap((a) => a.types),
  );
  const active = await activeGeneration(deps.db, tenantId, product.id);
  if (active) return active;
  const at = new Date(deps.now()).toISOString();
  const actor = actorOf(principal);
  const row: PassportGenerationTable = {
    id: randomUUID(),
    tenant_id: tenantId,
    product_id: product.id,
    status: 'queued',
    stage: null,
    stages: JSON.stringify(initialStages()),
    options: JSON.stringify({
      strictness: input.strictness,
      region: input.region,
      lifecycleStage: input.lifecycleStage,
      dppOptions: input.dppOptions,
    }),
    warnings: '[]',
    error: null,
    result: null,
    sandbox: sandbox ? 1 : 0,
    attempts: 0,
    lease_owner: null,
    locked_until: null,
    actor_type: actor.type,
    actor_id: actor.id,
    correlation_id: correlationId,
    created_at: at,
    updated_at: at,
    started_at: null,
    finished_at: null,
  };
  await insertGeneration(deps.db, row);
  deps.onQueued?.();
  return row;
}

/** GET /dpp/status/{requestId} and the 202 body. */
export function generationView(row: PassportGenerationTable) {
  const options = JSON.parse(row.options) as GenerationOptions;
  const anchorRequested = options.dppOptions?.anchorToBlockchain === true;
  const stages = (JSON.parse(row.stages) as StageRecord[]).map((s) => ({
    ...s,
    title: GENERATION_STAGES.find((g) => g.name === s.name)?.title ?? s.name,
  }));
  return {
    requestId: row.id,
    productId: row.product_id,
    status: row.status,
    stage: row.stage,
    stages,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    attempts: row.attempts,
    options: {
      strictness: options.strictness ?? 'standard',
      region: options.region ?? null,
      lifecycleStage: options.lifecycleStage ?? null,
      clientRequestId: options.dppOptions?.requestId ?? null,
      manufacturerDid: options.dppOptions?.manufacturerDid ?? null,
    },
    anchoring: {
      requested: anchorRequested,
      performed: false,
      reason: anchorRequested
        ? row.sandbox === 1
          ? 'ignored in the sandbox, which never anchors'
          : 'no chain configured'
        : null,
    },
    warnings: JSON.parse(row.warnings) as unknown[],
    error: row.error ? (JSON.parse(row.error) as GenerationError) : null,
    result: row.result ? (JSON.parse(row.result) as Record<string, unknown>) : null,
    links: {
      self: statusPath(row.id),
      passport: `/api/v2/passports/${row.product_id}`,
    },
  };
}
