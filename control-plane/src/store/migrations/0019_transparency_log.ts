import { type Kysely, sql } from 'kysely';

/**
 * The transparency log over seal receipts (docs/label-proof.md): each receipt's place in the log, the
 * hash of every perfect subtree once complete (level 0 holds the leaf hashes), the signed tree heads, and
 * one row holding the tree's size, which the sequencer locks.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('seal_receipts').addColumn('leaf_index', 'integer').execute();
  await db.schema
    .createIndex('seal_receipts_unlogged')
    .on('seal_receipts')
    .columns(['sealed_at', 'job_ref'])
    .where(sql.ref('leaf_index'), 'is', null)
    .execute();
  await db.schema
    .createIndex('seal_receipts_leaf')
    .on('seal_receipts')
    .column('leaf_index')
    .unique()
    .execute();
  await db.schema
    .createTable('log_nodes')
    .addColumn('level', 'integer', (c) => c.notNull())
    .addColumn('node_index', 'integer', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('log_nodes_pk', ['level', 'node_index'])
    .execute();
  await db.schema
    .createTable('log_tree_heads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tree_size', 'integer', (c) => c.notNull())
    .addColumn('root_hash', 'text', (c) => c.notNull())
    .addColumn('tree_head', 'text', (c) => c.notNull())
    .addColumn('signed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('log_tree_heads_latest')
    .on('log_tree_heads')
    .columns(['tree_size', 'signed_at'])
    .execute();
  await db.schema
    .createTable('transparency_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tree_size', 'integer', (c) => c.notNull())
    .execute();
  await sql`insert into transparency_log (id, tree_size) values ('log', 0)`.execute(db);
}
