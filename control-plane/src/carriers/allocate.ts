import { randomUUID } from 'node:crypto';
import { type EpcScheme, type EpcSchemePreference } from '@dpp/shared';
import { sql } from 'kysely';
import { recordAudit } from '../audit/index.js';
import { recordEvent } from '../events/index.js';
import { ApiError, type Actor } from '../http/index.js';
import { getProductForUpdate, markProductInPrintLoop } from '../products/index.js';
import type { Db } from '../store/index.js';
import { SERIAL_LIMIT, exportPath } from './model.js';
import { isPostgres, isUniqueViolation } from '../store/index.js';
import { checkRegisteredSerials, insertRegisteredSerials, refuseTaken } from './register.js';

export interface AllocationContext {
  tenantId: string;
  actor: Actor;
  correlationId: string | null;
  now: () => number;
}

/** The 201 answer of POST /carriers/batch. */
export interface BatchView {
  batchId: string;
  productId: string;
  gtin: string;
  allocated: number;
  serials: string[];
  exportPath: string;
}

/**
 * Takes `count` serials from the tenant's counter: one guarded UPDATE, so concurrent batches (on either
 * database) get disjoint ranges; the counter never goes back. Returns the first serial of the range.
 */
async function reserveSerials(trx: Db, tenantId: string, count: number, at: string): Promise<number> {
  await trx
    .insertInto('carrier_serial_counters')
    .values({ tenant_id: tenantId, next_serial: 1, updated_at: at })
    .onConflict((oc) => oc.column('tenant_id').doNothing())
    .execute();
  const row = await trx
    .updateTable('carrier_serial_counters')
    .set({ next_serial: sql<number>`next_serial + ${count}`, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where(sql<number>`next_serial + ${count}`, '<=', SERIAL_LIMIT)
    .returning('next_serial')
    .executeTakeFirst();
  if (row) return Number(row.next_serial) - count;
  const current = await trx
    .selectFrom('carrier_serial_counters')
    .select('next_serial')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  const available = SERIAL_LIMIT - Number(current.next_serial);
  throw new ApiError(
    'SERIAL_SPACE_EXHAUSTED',
    `Only ${available} serials remain in this workspace's SGTIN-96 serial space (serials stop at 2^38 - 1)`,
    { details: { requested: count, available } },
  );
}

/** Inserts the serials first..last in one statement (a series on PostgreSQL, a recursive CTE on SQLite). */
async function insertSerialRange(
  trx: Db,
  r: {
    tenantId: string;
    productId: string;
    gtin: string;
    batchId: string;
    at: string;
    first: number;
    last: number;
    scheme: EpcScheme;
  },
): Promise<void> {
  const columns = sql`(tenant_id, serial, seq, product_id, gtin, batch_id, allocated_at, epc_scheme)`;
  if (isPostgres(trx)) {
    await sql`insert into carrier_serials ${columns}
      select ${r.tenantId}, g::text, g, ${r.productId}, ${r.gtin}, ${r.batchId}, ${r.at}, ${r.scheme}
      from generate_series(${r.first}::bigint, ${r.last}::bigint) as g`.execute(trx);
    return;
  }
  await sql`with recursive s(n) as (
      select cast(${r.first} as integer) union all select n + 1 from s where n < cast(${r.last} as integer)
    )
    insert into carrier_serials ${columns}
    select ${r.tenantId}, cast(n as text), n, ${r.productId}, ${r.gtin}, ${r.batchId}, ${r.at}, ${r.scheme}
    from s`.execute(trx);
}

/** What POST /carriers/batch asks for: `count` serials from the counter, or these registered serials. */
export type BatchInput = { productId: string } & (
  { count: number; serials?: undefined } | { serials: string[]; count?: undefined }
);

/** The scheme of the counter's serials (all fit SGTIN-96) under a product's preference. */
function counterScheme(preference: EpcSchemePreference): EpcScheme {
  return preference === 'sgtin-198' ? 'sgtin-198' : 'sgtin-96';
}

/**
 * POST /carriers/batch: allocates `count` serials of the tenant's sequence to a product, or registers the
 * given `serials` (each taking its number from the same counter, so the export's order and paging and the
 * never-reused rule hold for both), records the batch, marks the product as in the print loop and queues
 * carrier.generated, in one transaction. An unknown product (or another tenant's) is 404; a voided one 409
 * PRODUCT_VOIDED; registered serials are checked all or nothing (see register.ts).
 */
export async function allocateSerials(db: Db, ctx: AllocationContext, input: BatchInput): Promise<BatchView> {
  try {
    return await allocateOnce(db, ctx, input);
  } catch (err) {
    // Two requests registered the same serial at once: the unique index of registered serials let one in.
    if (input.serials !== undefined && isUniqueViolation(err)) {
      await refuseTaken(db, ctx.tenantId, input.serials);
    }
    throw err;
  }
}

async function allocateOnce(db: Db, ctx: AllocationContext, input: BatchInput): Promise<BatchView> {
  const { tenantId } = ctx;
  const count = input.serials?.length ?? input.count!;
  return db.transaction().execute(async (trx) => {
    const product = await getProductForUpdate(trx, tenantId, input.productId);
    if (!product) throw ApiError.notFound('Product');
    if (product.voided_at) {
      throw new ApiError('PRODUCT_VOIDED', 'The product is voided; a voided product gets no new serials', {
        details: { productId: product.id, voidedAt: product.voided_at },
      });
    }
    const schemes =
      input.serials === undefined
        ? undefined
        : await checkRegisteredSerials(trx, tenantId, product, input.serials);
    const at = new Date(ctx.now()).toISOString();
    const first = await reserveSerials(trx, tenantId, count, at);
    const last = first + count - 1;
    const batchId = randomUUID();
    const rows = { tenantId, productId: product.id, gtin: product.gtin, batchId, at, first };
    if (input.serials === undefined) {
      await insertSerialRange(trx, {
        ...rows,
        last,
        scheme: counterScheme(product.epc_scheme as EpcSchemePreference),
      });
    } else {
      await insertRegisteredSerials(trx, rows, input.serials, schemes!);
    }
    const serials = input.serials ?? Array.from({ length: count }, (_, i) => String(first + i));
    await trx
      .insertInto('carrier_batches')
      .values({
        id: batchId,
        tenant_id: tenantId,
        product_id: product.id,
        gtin: product.gtin,
        first_serial: first,
        last_serial: last,
        count,
        correlation_id: ctx.correlationId,
        created_at: at,
      })
      .execute();
    await markProductInPrintLoop(trx, tenantId, product.id, at);
    const path = exportPath(product.id, batchId);
    await recordEvent(trx, {
      tenantId,
      type: 'carrier.generated',
      resource: { type: 'product', id: product.id },
      data: {
        productId: product.id,
        gtin: product.gtin,
        batchId,
        allocated: count,
        firstSerial: serials[0]!,
        lastSerial: serials[count - 1]!,
        exportPath: path,
      },
      correlationId: ctx.correlationId,
      occurredAt: at,
    });
    await recordAudit(trx, {
      tenantId,
      actor: ctx.actor,
      action: 'carriers.allocated',
      resource: { type: 'carrier_batch', id: batchId },
      correlationId: ctx.correlationId,
      details: {
        productId: product.id,
        count,
        firstSerial: serials[0]!,
        lastSerial: serials[count - 1]!,
        ...(input.serials === undefined ? {} : { registered: true }),
      },
      at,
    });
    return {
      batchId,
      productId: product.id,
      gtin: product.gtin,
      allocated: count,
      serials,
      exportPath: path,
    };
  });
}
