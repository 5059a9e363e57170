/**
 * A workspace's public company slug: the name it goes by in public addresses (the security advisory feed),
 * chosen at sign-up or made from the workspace name, editable in settings, unique. Lower-case letters, digits
 * and inner hyphens, 3 to 40 characters; a few words the site uses itself are reserved.
 */
import type { Db } from '../store/index.js';

const SLUG = /^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$/;
const RESERVED = new Set([
  'api',
  'www',
  'admin',
  'settings',
  'signin',
  'signup',
  'signout',
  'public',
  'well-known',
]);

/** What is wrong with a slug, in words for a form, or null when it is a valid one. */
export function slugProblem(slug: string): string | null {
  if (!SLUG.test(slug) || slug.includes('--'))
    return 'Use 3 to 40 lower-case letters, digits and single hyphens, starting and ending with a letter or digit';
  if (RESERVED.has(slug)) return 'This slug is reserved';
  return null;
}

/** A valid slug made from a workspace name ("Acme Labels GmbH" → "acme-labels-gmbh"). */
export function slugFrom(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 34)
    .replace(/-+$/, '');
  const padded = base.length >= 3 ? base : `${base || 'workspace'}-ws`.replace(/^-/, '');
  return RESERVED.has(padded) ? `${padded}-ws` : padded;
}

export async function slugTaken(db: Db, slug: string, exceptTenantId?: string): Promise<boolean> {
  let q = db.selectFrom('tenants').select('id').where('slug', '=', slug);
  if (exceptTenantId) q = q.where('id', '!=', exceptTenantId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** `base`, or `base-2`, `base-3`, ... whichever is free first. */
export async function freeSlug(db: Db, base: string): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base.slice(0, 36)}-${n}`;
    if (!(await slugTaken(db, candidate))) return candidate;
  }
}

export class SlugTakenError extends Error {
  override name = 'SlugTakenError';
  constructor(readonly slug: string) {
    super(`The company slug ${slug} is taken`);
  }
}

/** Changes a workspace's slug; a slug another workspace holds is refused (SlugTakenError). */
export async function changeSlug(db: Db, tenantId: string, slug: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (await slugTaken(trx, slug, tenantId)) throw new SlugTakenError(slug);
    await trx.updateTable('tenants').set({ slug }).where('id', '=', tenantId).execute();
  });
}

/** The slug of a workspace. */
export async function slugOf(db: Db, tenantId: string): Promise<string> {
  const row = await db
    .selectFrom('tenants')
    .select('slug')
    .where('id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return row.slug;
}
