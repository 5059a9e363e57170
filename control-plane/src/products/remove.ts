import { recordAudit } from '../audit/index.js';
import { recordEvent } from '../events/index.js';
import { ApiError } from '../http/index.js';
import type { Db, ProductTable } from '../store/index.js';
import { getProductForUpdate } from './queries.js';
import type { WriteContext } from './rules.js';

function retained(row: ProductTable): ApiError | undefined {
  if (row.published_at) {
    return new ApiError(
      'PUBLISHED_PASSPORT_RETAINED',
      'A passport of this product was published; it is retained, so the product cannot be deleted',
      { details: { firstPublishedAt: row.published_at } },
    );
  }
  if (row.print_loop_at) {
    return new ApiError(
      'PRODUCT_REFERENCED',
      'Serials of this product entered the print loop; void the product instead of deleting it',
      { details: { printLoopEnteredAt: row.print_loop_at } },
    );
  }
  return undefined;
}

/**
 * DELETE /products/{id}: hard-deletes a never-published product with no print-loop history, with its
 * versions (its events stay, as the record of what happened). One guarded DELETE on both flags, so a
 * publication or print that commits first wins and the delete answers 409.
 */
export async function deleteProduct(db: Db, ctx: WriteContext, id: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await getProductForUpdate(trx, ctx.tenantId, id);
    if (!row) throw ApiError.notFound('Product');
    const refusal = retained(row);
    if (refusal) throw refusal;
    const res = await trx
      .deleteFrom('products')
      .where('tenant_id', '=', ctx.tenantId)
      .where('id', '=', id)
      .where('published_at', 'is', null)
      .where('print_loop_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numDeletedRows) !== 1) {
      const now = await getProductForUpdate(trx, ctx.tenantId, id);
      throw (now && retained(now)) ?? ApiError.notFound('Product');
    }
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: 'product.deleted',
      resource: { type: 'product', id },
      correlationId: ctx.correlationId,
      details: { gtin: row.gtin, serialNumber: row.serial_number, category: row.category },
    });
    await recordEvent(trx, {
      tenantId: ctx.tenantId,
      type: 'product.deleted',
      resource: { type: 'product', id },
      correlationId: ctx.correlationId,
      data: { productId: id, gtin: row.gtin, serialNumber: row.serial_number, category: row.category },
    });
  });
}
