import { type Kysely, sql } from 'kysely';

/**
 * Every public key a device has had, with the window it was the device's key in: an evidence bundle signed
 * before a key rotation is verified with the key of its time. Existing devices start with their current key,
 * from their last rotation (or enrollment).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('device_keys')
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('thumbprint', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('valid_from', 'text', (c) => c.notNull())
    .addColumn('valid_until', 'text')
    .addPrimaryKeyConstraint('device_keys_pk', ['device_id', 'thumbprint'])
    .execute();
  await sql`insert into device_keys (device_id, thumbprint, public_jwk, valid_from, valid_until)
    select id, key_thumbprint, public_jwk, coalesce(key_rotated_at, enrolled_at), null from devices`.execute(
    db,
  );
}
