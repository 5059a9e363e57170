import { randomUUID } from 'node:crypto';
import { publishedPassportRetained } from '../products/index.js';
import { type Db, isPostgres, type PassportTable, type PassportVersionTable } from '../store/index.js';
import type { AnchoredCredentialRef, Sections } from './content.js';

export async function getPassport(
  db: Db,
  tenantId: string,
  productId: string,
): Promise<PassportTable | undefined> {
  return db
    .selectFrom('passports')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .executeTakeFirst();
}

/** Reads a passport inside a transaction, locking its row on PostgreSQL so concurrent writers queue. */
export async function getPassportForUpdate(
  trx: Db,
  tenantId: string,
  productId: string,
): Promise<PassportTable | undefined> {
  const q = trx
    .selectFrom('passports')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId);
  return (isPostgres(trx) ? q.forUpdate() : q).executeTakeFirst();
}

export async function productExists(db: Db, tenantId: string, productId: string): Promise<boolean> {
  const row = await db
    .selectFrom('products')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', productId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function listVersions(
  db: Db,
  tenantId: string,
  productId: string,
): Promise<PassportVersionTable[]> {
  return db
    .selectFrom('passport_versions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .orderBy('version')
    .execute();
}

export async function getVersionById(db: Db, id: string): Promise<PassportVersionTable | undefined> {
  return db.selectFrom('passport_versions').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface LogEntry {
  tenantId: string;
  productId: string;
  type: string;
  data: Record<string, unknown>;
  correlationId: string | null;
  at: string;
}

/** Appends to the passport's lifecycle log, in the caller's transaction. */
export async function appendLog(db: Db, e: LogEntry): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('passport_log')
    .values({
      id,
      tenant_id: e.tenantId,
      product_id: e.productId,
      type: e.type,
      data: JSON.stringify(e.data),
      correlation_id: e.correlationId,
      occurred_at: e.at,
    })
    .execute();
  return id;
}

/** The validation credentials anchored to a product's passport, as the `credentials` section lists them. */
export async function anchoredCredentials(
  db: Db,
  tenantId: string,
  productId: string,
): Promise<AnchoredCredentialRef[]> {
  const rows = await db
    .selectFrom('passport_validations')
    .select(['credential_types', 'issuer', 'digest', 'occurred_at'])
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .orderBy('occurred_at')
    .execute();
  return rows.map((r) => ({
    types: JSON.parse(r.credential_types) as string[],
    issuer: r.issuer,
    digest: r.digest,
    anchoredAt: r.occurred_at,
  }));
}

export const parseSections = (json: string): Sections => JSON.parse(json) as Sections;
export const parseTiers = (json: string): Record<string, string> =>
  JSON.parse(json) as Record<string, string>;

/**
 * The instant of a write to a passport: now, but always after its last write, so the commands and
 * versions of one passport are strictly ordered by time (as-of projects from that order).
 */
export function instantAfter(nowMs: number, lastWrite: string): string {
  return new Date(Math.max(nowMs, Date.parse(lastWrite) + 1)).toISOString();
}

/** 409 PUBLISHED_PASSPORT_RETAINED once any version of the passport was published. */
export function assertNeverPublished(passport: PassportTable): void {
  if (passport.first_published_at === null) return;
  throw publishedPassportRetained(passport.product_id, passport.first_published_at);
}
