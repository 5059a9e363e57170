import { recordAudit } from '../audit/index.js';
import { recordEvent } from '../events/index.js';
import { ApiError } from '../http/index.js';
import type { Db, ProductTable } from '../store/index.js';
import { insertVersions, type VersionChange } from './history.js';
import { STAGE_TRANSITIONS, productStatus, toProductView, type ProductView } from './model.js';
import { getProductForUpdate } from './queries.js';
import type { WriteContext } from './rules.js';

async function commitChange(
  trx: Db,
  ctx: WriteContext,
  next: ProductTable,
  change: VersionChange,
  changedFields: string[],
  reason: string | null,
  eventData: Record<string, unknown>,
): Promise<ProductView> {
  const product = toProductView(next);
  await insertVersions(trx, [
    {
      tenantId: ctx.tenantId,
      product,
      change,
      changedFields,
      reason,
      actor: ctx.actor,
      correlationId: ctx.correlationId,
      at: next.updated_at,
    },
  ]);
  await recordEvent(trx, {
    tenantId: ctx.tenantId,
    type: 'product.updated',
    resource: { type: 'product', id: next.id },
    correlationId: ctx.correlationId,
    occurredAt: next.updated_at,
    data: {
      productId: next.id,
      version: next.version,
      changes: changedFields,
      status: product.status,
      ...eventData,
    },
  });
  return product;
}

/**
 * POST /products/{id}/lifecycle/transition: draft -> validated -> ready_for_dpp (api-v2.md, States:
 * Product lifecycle). The move is one guarded UPDATE on the expected stage; any other move, or a move of
 * a voided product, is 422 INVALID_STATE_TRANSITION with `details.from`, `to` and `allowed`. The reason
 * goes on the version, the product.updated event and the audit log.
 */
export async function transitionProduct(
  db: Db,
  ctx: WriteContext,
  id: string,
  to: string,
  reason: string | null,
): Promise<ProductView> {
  return db.transaction().execute(async (trx) => {
    const row = await getProductForUpdate(trx, ctx.tenantId, id);
    if (!row) throw ApiError.notFound('Product');
    const from = row.voided_at ? 'voided' : row.stage;
    const allowed = row.voided_at ? [] : [...(STAGE_TRANSITIONS[row.stage] ?? [])];
    if (!allowed.includes(to as never)) {
      throw new ApiError(
        'INVALID_STATE_TRANSITION',
        allowed.length
          ? `A product in ${from} can move to ${allowed.join(' or ')}, not to ${to}`
          : `A product in ${from} cannot move to ${to}`,
        { details: { from, to, allowed } },
      );
    }
    const at = new Date(ctx.now()).toISOString();
    const res = await trx
      .updateTable('products')
      .set({ stage: to, version: row.version + 1, updated_at: at })
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', id)
      .where('stage', '=', row.stage)
      .where('voided_at', 'is', null)
      .where('version', '=', row.version)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) {
      throw ApiError.plain(409, 'The product changed while this transition ran; retry', {
        details: { reason: 'concurrent_update' },
      });
    }
    const next = { ...row, stage: to, version: row.version + 1, updated_at: at };
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: 'product.lifecycle_transitioned',
      resource: { type: 'product', id },
      correlationId: ctx.correlationId,
      details: { from: row.stage, to, reason },
      at,
    });
    return commitChange(trx, ctx, next, 'transitioned', ['lifecycleStage', 'status'], reason, {
      transition: { from: row.stage, to, reason },
      previousStatus: productStatus(row.stage, null),
    });
  });
}

/**
 * POST /products/{id}/void: a terminal state for the item (api-v2.md, States). The reason is stored,
 * versioned, evented and audited. A second void is a plain 409 (api-v2.md, Errors: "Re-void").
 */
export async function voidProduct(
  db: Db,
  ctx: WriteContext,
  id: string,
  reason: string,
): Promise<ProductView> {
  return db.transaction().execute(async (trx) => {
    const row = await getProductForUpdate(trx, ctx.tenantId, id);
    if (!row) throw ApiError.notFound('Product');
    const at = new Date(ctx.now()).toISOString();
    const res = await trx
      .updateTable('products')
      .set({ voided_at: at, void_reason: reason, version: row.version + 1, updated_at: at })
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', id)
      .where('voided_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) !== 1) {
      throw ApiError.plain(409, 'The product is already voided', {
        details: { reason: 'already_voided', voidedAt: row.voided_at },
      });
    }
    const next = { ...row, voided_at: at, void_reason: reason, version: row.version + 1, updated_at: at };
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: 'product.voided',
      resource: { type: 'product', id },
      correlationId: ctx.correlationId,
      details: { reason, gtin: row.gtin, serialNumber: row.serial_number, stage: row.stage },
      at,
    });
    return commitChange(trx, ctx, next, 'voided', ['status', 'voidedAt', 'voidReason'], reason, {
      voided: true,
      reason,
    });
  });
}
