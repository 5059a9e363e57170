import type { Kysely } from 'kysely';

/**
 * The passport version an attempt printed: the product's published version when the job was claimed. Its
 * envelope names it, and the device's evidence bundle commits to it (id, content hash, Merkle root).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('print_attempts').addColumn('passport_version_id', 'text').execute();
}
