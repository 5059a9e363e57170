import { normalizeGtin, isCodecError } from '@dpp/shared';
import { z } from 'zod';
import type { Db } from '../store/index.js';
import { canonicalCategory } from '../schemas/index.js';
import { parseStatusFilter, toProductView, type StatusFilter } from './model.js';
import {
  CursorQuery,
  DEFAULT_PAGE_SIZE,
  LimitQuery,
  decodeCursor,
  encodeCursor,
  toPage,
} from '../http/index.js';
import { nameKeyColumn } from './queries.js';

export const PRODUCT_SORTS = [
  'createdAt',
  '-createdAt',
  'updatedAt',
  '-updatedAt',
  'productName',
  '-productName',
] as const;
export type ProductSort = (typeof PRODUCT_SORTS)[number];

const StatusList = z
  .string()
  .transform((v, ctx) => {
    const out: StatusFilter[] = [];
    for (const part of v.split(',')) {
      const f = parseStatusFilter(part.trim());
      if (!f) {
        ctx.issues.push({
          code: 'custom',
          input: v,
          message: `unknown status "${part.trim()}"; use Draft, Validated, ReadyForDpp or Voided (or the stage names)`,
        });
        return z.NEVER;
      }
      out.push(f);
    }
    return out;
  })
  .meta({
    description:
      'Comma-separated statuses: Draft, Validated, ReadyForDpp, Voided, or the stage names draft, validated, ready_for_dpp (case-insensitive)',
  });

const GtinFilter = z
  .string()
  .transform((v, ctx) => {
    try {
      return normalizeGtin(v);
    } catch (err) {
      if (!isCodecError(err)) throw err;
      ctx.issues.push({ code: 'custom', input: v, message: err.message });
      return z.NEVER;
    }
  })
  .meta({ description: 'Only products with this GTIN (any GTIN length; compared as 14 digits)' });

export const ProductListQuery = z
  .object({
    limit: LimitQuery,
    cursor: CursorQuery,
    category: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a category name such as electronics')
      .optional()
      .meta({ description: 'Only products of this category (case-insensitive)' }),
    status: StatusList.optional(),
    gtin: GtinFilter.optional(),
    sort: z
      .enum(PRODUCT_SORTS, { error: `must be one of ${PRODUCT_SORTS.join(', ')}` })
      .optional()
      .meta({ description: 'Sort key, `-` for descending; -createdAt (newest first) by default' }),
  })
  .strict();

export type ProductListQuery = z.output<typeof ProductListQuery>;

const SORT_COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at', productName: 'name_key' } as const;

/** One page of a tenant's products, keyset-paged on (sort key, id). */
export async function listProducts(db: Db, tenantId: string, q: ProductListQuery) {
  const sort: ProductSort = q.sort ?? '-createdAt';
  const desc = sort.startsWith('-');
  const key = SORT_COLUMNS[sort.replace(/^-/, '') as keyof typeof SORT_COLUMNS];
  const limit = q.limit ?? DEFAULT_PAGE_SIZE;
  const col = key === 'name_key' ? nameKeyColumn(db) : null;
  let query = db.selectFrom('products').selectAll().where('tenant_id', '=', tenantId);
  if (q.category) query = query.where('category', '=', canonicalCategory(q.category));
  if (q.gtin) query = query.where('gtin', '=', q.gtin);
  if (q.status) {
    const filters = q.status;
    query = query.where((eb) =>
      eb.or(
        filters.map((f) =>
          f.voided
            ? eb('voided_at', 'is not', null)
            : eb.and([eb('voided_at', 'is', null), eb('stage', '=', f.stage)]),
        ),
      ),
    );
  }
  if (q.cursor) {
    const after = decodeCursor(q.cursor, sort);
    const op = desc ? '<' : '>';
    query = query.where((eb) => {
      const k = col ?? eb.ref(key);
      const v = String(after.value);
      return eb.or([eb(k, op, v), eb.and([eb(k, '=', v), eb('id', op, after.id)])]);
    });
  }
  const dir = desc ? 'desc' : 'asc';
  const rows = await query
    .orderBy(col ?? key, dir)
    .orderBy('id', dir)
    .limit(limit + 1)
    .execute();
  return toPage(rows, limit, toProductView, (r) => encodeCursor(sort, r[key], r.id));
}
