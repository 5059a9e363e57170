import { sql } from 'kysely';
import { type Db, isPostgres, type ProductTable } from '../store/index.js';

/** Rows per multi-row INSERT: 27 columns x 200 stays far below both dialects' parameter limits. */
const INSERT_CHUNK = 200;

/**
 * Inserts new products, skipping any that would break a uniqueness rule (DUPLICATE_GTIN among
 * model-granularity products, DUPLICATE_SERIAL among item/batch ones). Returns the ids inserted; a row
 * missing from the answer lost to an existing product, including one committed concurrently.
 */
export async function insertProducts(db: Db, rows: readonly ProductTable[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    const res = await db
      .insertInto('products')
      .values(chunk)
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .execute();
    for (const r of res) inserted.add(r.id);
  }
  return inserted;
}

/** The product that holds the GTIN (model granularity) or GTIN + serial (item, batch) a row would take. */
export async function findHolder(
  db: Db,
  row: Pick<ProductTable, 'tenant_id' | 'gtin' | 'serial_number' | 'granularity'>,
  exceptId?: string,
): Promise<string | undefined> {
  let q = db
    .selectFrom('products')
    .select('id')
    .where('tenant_id', '=', row.tenant_id)
    .where('gtin', '=', row.gtin);
  q =
    row.granularity === 'model'
      ? q.where('granularity', '=', 'model')
      : q.where('granularity', '<>', 'model').where('serial_number', '=', row.serial_number);
  if (exceptId) q = q.where('id', '<>', exceptId);
  return (await q.executeTakeFirst())?.id;
}

export async function getProduct(db: Db, tenantId: string, id: string): Promise<ProductTable | undefined> {
  return db
    .selectFrom('products')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Reads a product inside a transaction, locking its row on PostgreSQL (`FOR UPDATE`) so a concurrent
 * write waits; SQLite transactions already run one at a time. Other domains (passports, carriers) use it
 * to read a product's stage and flags before changing something that depends on them.
 */
export async function getProductForUpdate(
  trx: Db,
  tenantId: string,
  id: string,
): Promise<ProductTable | undefined> {
  const q = trx.selectFrom('products').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  return (isPostgres(trx) ? q.forUpdate() : q).executeTakeFirst();
}

/** The sort key of the byte-wise name order: PostgreSQL compares with the "C" collation like SQLite. */
export function nameKeyColumn(db: Db) {
  return isPostgres(db)
    ? sql<string>`${sql.ref('name_key')} collate "C"`
    : sql<string>`${sql.ref('name_key')}`;
}

/** Product counts of a tenant per category, lifecycle stage and voided flag. */
export async function categoryCounts(db: Db, tenantId: string) {
  return db
    .selectFrom('products')
    .select([
      'category',
      'stage',
      sql<number>`case when ${sql.ref('voided_at')} is null then 0 else 1 end`.as('voided'),
      sql<number>`count(*)`.as('n'),
      sql<string>`max(${sql.ref('updated_at')})`.as('last_updated_at'),
    ])
    .where('tenant_id', '=', tenantId)
    .groupBy(['category', 'stage', sql`case when ${sql.ref('voided_at')} is null then 0 else 1 end`])
    .execute();
}
