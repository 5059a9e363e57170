import { recordEvent } from '../events/index.js';
import { ApiError } from '../http/index.js';
import type { Db, ProductTable } from '../store/index.js';
import { insertVersions } from './history.js';
import { toProductView, type ProductView } from './model.js';
import { findHolder, insertProducts } from './queries.js';
import type { WriteContext } from './rules.js';

/** Largest number of items of POST /products/batch (api-v2.md, Limits). */
export const BATCH_MAX_ITEMS = 1000;

export interface PreparedItem {
  /** Position in the caller's list (batch index, ingest row). */
  index: number;
  row: ProductTable;
}

export interface InsertOutcome {
  created: { index: number; product: ProductView }[];
  failed: { index: number; error: ApiError }[];
}

function duplicateError(row: ProductTable, where: string, holderId?: string): ApiError {
  const details = {
    gtin: row.gtin,
    granularity: row.granularity,
    ...(holderId ? { productId: holderId } : {}),
  };
  if (row.granularity === 'model') {
    return new ApiError(
      'DUPLICATE_GTIN',
      `GTIN ${row.gtin} is already used by a model-granularity product ${where}`,
      {
        details,
      },
    );
  }
  return new ApiError(
    'DUPLICATE_SERIAL',
    `GTIN ${row.gtin} with serialNumber ${row.serial_number} already exists ${where}`,
    { details: { ...details, serialNumber: row.serial_number } },
  );
}

const uniquenessKey = (r: ProductTable) =>
  r.granularity === 'model' ? `m\u0000${r.gtin}` : `s\u0000${r.gtin}\u0000${r.serial_number}`;

/**
 * Inserts prepared products in the caller's transaction with per-item isolation: an item that collides
 * with an earlier item of the same call or with a stored product fails alone (409 DUPLICATE_GTIN or
 * DUPLICATE_SERIAL) and the others commit. Each created product gets version 1 and a product.created
 * event in the same transaction.
 */
export async function insertPrepared(
  trx: Db,
  ctx: WriteContext,
  items: readonly PreparedItem[],
  options: { label: (index: number) => string; lookupHolders?: boolean },
): Promise<InsertOutcome> {
  const failed: InsertOutcome['failed'] = [];
  const firstByKey = new Map<string, number>();
  const unique: PreparedItem[] = [];
  for (const item of items) {
    const key = uniquenessKey(item.row);
    const first = firstByKey.get(key);
    if (first !== undefined) {
      failed.push({
        index: item.index,
        error: duplicateError(item.row, `(it first appears at ${options.label(first)})`),
      });
      continue;
    }
    firstByKey.set(key, item.index);
    unique.push(item);
  }

  const inserted = await insertProducts(
    trx,
    unique.map((i) => i.row),
  );
  const created: InsertOutcome['created'] = [];
  for (const item of unique) {
    if (inserted.has(item.row.id)) {
      created.push({ index: item.index, product: toProductView(item.row) });
    } else {
      const holder = options.lookupHolders ? await findHolder(trx, item.row) : undefined;
      failed.push({ index: item.index, error: duplicateError(item.row, 'in this workspace', holder) });
    }
  }

  await insertVersions(
    trx,
    created.map(({ product }) => ({
      tenantId: ctx.tenantId,
      product,
      change: 'created' as const,
      changedFields: [],
      actor: ctx.actor,
      correlationId: ctx.correlationId,
      at: product.createdAt,
    })),
  );
  for (const { product } of created) {
    await recordEvent(trx, {
      tenantId: ctx.tenantId,
      type: 'product.created',
      resource: { type: 'product', id: product.id },
      correlationId: ctx.correlationId,
      occurredAt: product.createdAt,
      data: {
        productId: product.id,
        gtin: product.gtin,
        serialNumber: product.serialNumber,
        category: product.category,
        granularity: product.granularity,
        status: product.status,
        version: product.version,
      },
    });
  }
  failed.sort((a, b) => a.index - b.index);
  return { created, failed };
}

/** POST /products: one product, or the typed error of the first rule it breaks. */
export async function createProduct(db: Db, ctx: WriteContext, row: ProductTable): Promise<ProductView> {
  const outcome = await db
    .transaction()
    .execute((trx) =>
      insertPrepared(trx, ctx, [{ index: 0, row }], { label: () => 'item', lookupHolders: true }),
    );
  const failure = outcome.failed[0];
  if (failure) throw failure.error;
  return outcome.created[0]!.product;
}
