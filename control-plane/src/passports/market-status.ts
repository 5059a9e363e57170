/**
 * The market status of a passport's item (api-v2.md names POST /api/v2/backup/passport/{dppId}/market-status by
 * its error only): placed on the market, withdrawn, or recalled, as the publisher records it. Every change is
 * a row that is never updated (the audit trail) and an audit entry; the newest row is the status, and the
 * public passport shows it. A withdrawn or recalled item keeps its passport served: whoever holds the
 * product must still read it, and more than ever (never 410).
 */
import { recordAudit } from '../audit/index.js';
import { ApiError } from '../http/index.js';
import { type Db, type PassportMarketStatusTable, uuidv7 } from '../store/index.js';
import type { PassportWriteContext } from './publish.js';
import { getPassportForUpdate, instantAfter } from './queries.js';

export const MARKET_STATUSES = ['placed_on_market', 'withdrawn', 'recalled'] as const;
export type MarketStatus = (typeof MARKET_STATUSES)[number];

export interface MarketStatusEntry {
  status: MarketStatus;
  reason: string | null;
  effectiveAt: string;
  recordedAt: string;
  recordedBy: { type: string; id: string | null };
}

export interface MarketStatusInput {
  status: MarketStatus;
  reason?: string | undefined;
  effectiveAt?: string | undefined;
}

function entryOf(row: PassportMarketStatusTable): MarketStatusEntry {
  return {
    status: row.status as MarketStatus,
    reason: row.reason,
    effectiveAt: row.effective_at,
    recordedAt: row.recorded_at,
    recordedBy: { type: row.actor_type, id: row.actor_id },
  };
}

/** Every change, newest first. */
export async function marketStatusHistory(
  db: Db,
  tenantId: string,
  productId: string,
): Promise<MarketStatusEntry[]> {
  const rows = await db
    .selectFrom('passport_market_status')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .orderBy('recorded_at', 'desc')
    .execute();
  return rows.map(entryOf);
}

/** The status now, or null when none was recorded. */
export async function currentMarketStatus(db: Db, productId: string): Promise<MarketStatusEntry | null> {
  const row = await db
    .selectFrom('passport_market_status')
    .selectAll()
    .where('product_id', '=', productId)
    .orderBy('recorded_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? entryOf(row) : null;
}

/**
 * Records a change. An item is placed on the market only with a published passport (422
 * INVALID_STATE_TRANSITION), and withdrawn or recalled only once it was placed (409 INVALID_TRANSITION).
 * Recording the status the item already has changes nothing and answers the entry it has (`created: false`).
 */
export async function recordMarketStatus(
  db: Db,
  ctx: PassportWriteContext,
  productId: string,
  input: MarketStatusInput,
): Promise<{ created: boolean; entry: MarketStatusEntry; previous: MarketStatus | null }> {
  return db.transaction().execute(async (trx) => {
    // The passport row is locked (PostgreSQL) so two changes at once are recorded one after the other.
    const passport = await getPassportForUpdate(trx, ctx.tenantId, productId);
    if (!passport)
      throw new ApiError('PASSPORT_NOT_FOUND', 'Passport not found', { details: { dppId: productId } });
    const current = (await marketStatusHistory(trx, ctx.tenantId, productId))[0] ?? null;
    if (current?.status === input.status) return { created: false, entry: current, previous: current.status };
    if (input.status === 'placed_on_market' && passport.first_published_at === null) {
      throw new ApiError(
        'INVALID_STATE_TRANSITION',
        'An item is placed on the market with a published passport: publish a version first',
        { details: { dppId: productId, status: input.status } },
      );
    }
    if (input.status !== 'placed_on_market' && current === null) {
      throw new ApiError(
        'INVALID_TRANSITION',
        `An item never placed on the market cannot be ${input.status}`,
        {
          details: { from: null, to: input.status, allowed: ['placed_on_market'] },
        },
      );
    }
    // Strictly after the previous change, so the newest row is the status whatever the clocks did.
    const at = current ? instantAfter(ctx.now(), current.recordedAt) : new Date(ctx.now()).toISOString();
    const row: PassportMarketStatusTable = {
      id: uuidv7(),
      tenant_id: ctx.tenantId,
      product_id: productId,
      status: input.status,
      reason: input.reason ?? null,
      effective_at: input.effectiveAt ? new Date(input.effectiveAt).toISOString() : at,
      recorded_at: at,
      actor_type: ctx.actor.type,
      actor_id: ctx.actor.id,
      correlation_id: ctx.correlationId,
    };
    await trx.insertInto('passport_market_status').values(row).execute();
    await recordAudit(trx, {
      tenantId: ctx.tenantId,
      actor: ctx.actor,
      action: `passport.market_status.${input.status}`,
      resource: { type: 'passport', id: productId },
      correlationId: ctx.correlationId,
      details: {
        from: current?.status ?? null,
        to: input.status,
        reason: row.reason,
        effectiveAt: row.effective_at,
      },
      at,
    });
    return { created: true, entry: entryOf(row), previous: current?.status ?? null };
  });
}
