import { type Kysely, sql } from 'kysely';

/**
 * Every workspace gets a public company slug (tenants/slug.ts): existing ones one made from their name, made
 * unique with a numeric suffix in creation order; then a unique index holds it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tenants').addColumn('slug', 'text').execute();
  const { rows } = await sql<{
    id: string;
    name: string;
  }>`select id, name from tenants order by created_at, id`.execute(db);
  const used = new Set<string>();
  for (const row of rows) {
    const base = slugOf(row.name);
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base.slice(0, 36)}-${n}`;
    used.add(slug);
    await sql`update tenants set slug = ${slug} where id = ${row.id}`.execute(db);
  }
  await db.schema.createIndex('tenants_slug').unique().on('tenants').column('slug').execute();
}

/** The rule of tenants/slug.ts at the time of this migration (a migration never changes after it shipped). */
function slugOf(name: string): string {
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
