/**
 * What other domains call on products, inside their own transactions:
 * - the passports domain marks a product as ever-published and reads its lifecycle stage;
 * - the carriers and AIDC domains mark a product as having entered the print loop.
 * DELETE /products/{id} answers 409 PUBLISHED_PASSPORT_RETAINED or PRODUCT_REFERENCED from these marks.
 * The marks are facts about other resources, not edits of the product: they make no product version.
 */
import type { Db } from '../store/index.js';
import { toProductView, type ProductView } from './model.js';
import { getProductForUpdate } from './queries.js';

export { getProductForUpdate } from './queries.js';

async function markOnce(
  trx: Db,
  tenantId: string,
  productId: string,
  column: 'published_at' | 'print_loop_at',
  at: string,
): Promise<boolean> {
  const res = await trx
    .updateTable('products')
    .set({ [column]: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', productId)
    .where(column, 'is', null)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return true;
  const exists = await trx
    .selectFrom('products')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', productId)
    .executeTakeFirst();
  if (!exists) throw new Error(`product ${productId} does not exist in tenant ${tenantId}`);
  return false;
}

/**
 * Records that a passport of the product was published (the first instant is kept). Returns true on the
 * first publication, false when it was already marked; throws when the product does not exist.
 */
export function markProductPublished(
  trx: Db,
  tenantId: string,
  productId: string,
  at: string = new Date().toISOString(),
): Promise<boolean> {
  return markOnce(trx, tenantId, productId, 'published_at', at);
}

/**
 * Records that a serial of the product entered the print loop (allocation, print job). Returns true the
 * first time, false afterwards; throws when the product does not exist.
 */
export function markProductInPrintLoop(
  trx: Db,
  tenantId: string,
  productId: string,
  at: string = new Date().toISOString(),
): Promise<boolean> {
  return markOnce(trx, tenantId, productId, 'print_loop_at', at);
}

/** The product as the API shows it (with `lifecycleStage`, `everPublished`, `voidedAt`), locked for update. */
export async function readProductForUpdate(
  trx: Db,
  tenantId: string,
  productId: string,
): Promise<ProductView | undefined> {
  const row = await getProductForUpdate(trx, tenantId, productId);
  return row ? toProductView(row) : undefined;
}
