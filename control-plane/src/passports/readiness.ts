import { sql } from 'kysely';
import type { Db } from '../store/index.js';
import { publicStatus } from './model.js';

/**
 * readyToPrint (api-v2.md: "true only when at least one validation is recorded and the passport is
 * currently published"), shared by GET /passports/{id}/validations and the AIDC print-job gate.
 *
 * "Currently published" means live on the public route (model.ts `publicStatus`): a version was
 * published, the product is not voided, the passport was not published to partners or internally only,
 * and its command state is draft or published. Under review (submitted, approved), suspended, archived,
 * revoked or recycled passports are not printable: a label printed now would not resolve to a current
 * passport.
 */
export async function isReadyToPrint(db: Db, tenantId: string, productId: string): Promise<boolean> {
  const row = await db
    .selectFrom('passports as pp')
    .innerJoin('products as p', 'p.id', 'pp.product_id')
    .select([
      'pp.current_version',
      'pp.state',
      'pp.disclosure_tier',
      'p.voided_at',
      'p.granularity',
      sql<number>`(select count(*) from passport_validations v where v.product_id = ${sql.ref('pp.product_id')})`.as(
        'validations',
      ),
    ])
    .where('pp.tenant_id', '=', tenantId)
    .where('pp.product_id', '=', productId)
    .executeTakeFirst();
  if (!row || Number(row.validations) < 1) return false;
  const status = publicStatus({
    currentVersion: row.current_version,
    state: row.state,
    disclosureTier: row.disclosure_tier,
    productVoided: row.voided_at !== null,
    granularity: row.granularity,
  });
  return status.kind === 'live';
}
