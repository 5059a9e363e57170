import { z } from 'zod';
import { recordAudit } from '../audit/index.js';
import type { ApiError } from '../http/index.js';
import type { Db } from '../store/index.js';
import { BATCH_MAX_ITEMS, insertPrepared, type PreparedItem } from './create.js';
import { prepareCreate, type WriteContext } from './rules.js';

/**
 * Body of POST /products/batch. Items are checked one by one (not by this schema), so one bad item fails
 * alone with its index instead of failing the call.
 */
export const ProductBatchSchema = z
  .object({
    items: z
      .array(
        z.unknown().meta({ description: 'A ProductCreate object (the same contract as POST /products)' }),
      )
      .min(1, 'must hold at least 1 item')
      .max(BATCH_MAX_ITEMS, `must hold at most ${BATCH_MAX_ITEMS} items`),
  })
  .strict()
  .meta({ id: 'ProductBatch' });

export interface BatchItemError {
  index: number;
  /** `CODE: message`, as api-v2.md (Products, batch) specifies. */
  error: string;
  code: string;
  field?: string;
}

export interface BatchResult {
  created: number;
  failed: number;
  errors: BatchItemError[];
  products: { index: number; id: string }[];
}

/** `CODE: message` with the item-relative field; a plain error (no code) shows its HTTP status. */
export function batchError(index: number, error: ApiError): BatchItemError {
  const code = error.code ?? String(error.status);
  const field = typeof error.details?.field === 'string' ? error.details.field : undefined;
  return { index, error: `${code}: ${error.message}`, code, ...(field ? { field } : {}) };
}

/**
 * POST /products/batch: every item under the create contract, good items committed together in one
 * transaction, failures reported by index. An item never fails another.
 */
export async function createBatch(
  db: Db,
  ctx: WriteContext,
  items: readonly unknown[],
): Promise<BatchResult> {
  const prepared: PreparedItem[] = [];
  const errors: BatchItemError[] = [];
  items.forEach((raw, index) => {
    const p = prepareCreate(raw, ctx);
    if (p.ok) prepared.push({ index, row: p.row });
    else errors.push(batchError(index, p.error));
  });
  const outcome = await db.transaction().execute(async (trx) => {
    const o = await insertPrepared(trx, ctx, prepared, { label: (i) => `items[${i}]` });
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: 'products.batch_created',
      correlationId: ctx.correlationId,
      details: { items: items.length, created: o.created.length, failed: o.failed.length + errors.length },
    });
    return o;
  });
  for (const f of outcome.failed) errors.push(batchError(f.index, f.error));
  errors.sort((a, b) => a.index - b.index);
  return {
    created: outcome.created.length,
    failed: errors.length,
    errors,
    products: outcome.created
      .map((c) => ({ index: c.index, id: c.product.id }))
      .sort((a, b) => a.index - b.index),
  };
}
