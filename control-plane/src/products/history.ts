import {
  type Actor,
  DEFAULT_PAGE_SIZE,
  decodeCursor,
  decodeNumberCursor,
  encodeCursor,
  toPage,
} from '../http/index.js';
import type { Db, ProductVersionTable } from '../store/index.js';
import { timeOrderedUuid } from './ids.js';
import type { ProductView } from './model.js';

/** What kind of write made a version. */
export type VersionChange = 'created' | 'updated' | 'transitioned' | 'voided';

export interface NewVersion {
  tenantId: string;
  product: ProductView;
  change: VersionChange;
  changedFields: readonly string[];
  reason?: string | null;
  actor: Actor;
  correlationId: string | null;
  at: string;
}

function versionRow(v: NewVersion): ProductVersionTable {
  return {
    id: timeOrderedUuid(Date.parse(v.at)),
    tenant_id: v.tenantId,
    product_id: v.product.id,
    version: v.product.version,
    snapshot: JSON.stringify(v.product),
    changed_fields: JSON.stringify(v.changedFields),
    change: v.change,
    reason: v.reason ?? null,
    actor_type: v.actor.type,
    actor_id: v.actor.id,
    correlation_id: v.correlationId,
    created_at: v.at,
  };
}

/** Appends version rows (a full snapshot each) in the caller's transaction. */
export async function insertVersions(db: Db, versions: readonly NewVersion[]): Promise<void> {
  for (let i = 0; i < versions.length; i += 500) {
    const chunk = versions.slice(i, i + 500).map(versionRow);
    if (chunk.length > 0) await db.insertInto('product_versions').values(chunk).execute();
  }
}

export interface VersionView {
  version: number;
  change: string;
  changedFields: string[];
  reason: string | null;
  actor: { type: string; id: string | null };
  correlationId: string | null;
  createdAt: string;
  snapshot: ProductView;
}

function toVersionView(r: ProductVersionTable): VersionView {
  return {
    version: r.version,
    change: r.change,
    changedFields: JSON.parse(r.changed_fields) as string[],
    reason: r.reason,
    actor: { type: r.actor_type, id: r.actor_id },
    correlationId: r.correlation_id,
    createdAt: r.created_at,
    snapshot: JSON.parse(r.snapshot) as ProductView,
  };
}

/** A product's versions, oldest first, paged by version number. */
export async function listVersions(
  db: Db,
  tenantId: string,
  productId: string,
  page: { limit?: number | undefined; cursor?: string | undefined },
) {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  let q = db
    .selectFrom('product_versions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId);
  if (page.cursor) {
    q = q.where('version', '>', decodeNumberCursor(page.cursor, 'version'));
  }
  const rows = await q
    .orderBy('version', 'asc')
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, toVersionView, (r) => encodeCursor('version', r.version, r.id));
}

/** A product's domain events (product.created, product.updated, ...), oldest first. */
export async function listProductEvents(
  db: Db,
  tenantId: string,
  productId: string,
  page: { limit?: number | undefined; cursor?: string | undefined },
) {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  let q = db
    .selectFrom('events')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('resource_type', '=', 'product')
    .where('resource_id', '=', productId);
  if (page.cursor) {
    const after = decodeCursor(page.cursor, 'occurredAt');
    q = q.where((eb) =>
      eb.or([
        eb('occurred_at', '>', String(after.value)),
        eb.and([eb('occurred_at', '=', String(after.value)), eb('id', '>', after.id)]),
      ]),
    );
  }
  const rows = await q
    .orderBy('occurred_at', 'asc')
    .orderBy('id', 'asc')
    .limit(limit + 1)
    .execute();
  return toPage(
    rows,
    limit,
    (r) => ({
      id: r.id,
      type: r.type,
      occurredAt: r.occurred_at,
      correlationId: r.correlation_id,
      data: JSON.parse(r.data) as Record<string, unknown>,
    }),
    (r) => encodeCursor('occurredAt', r.occurred_at, r.id),
  );
}
