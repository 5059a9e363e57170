import type { Kysely } from 'kysely';

/** Control-plane signing keys, enrollment tokens, devices, and used OAuth client assertions. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('signing_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('alg', 'text', (c) => c.notNull())
    .addColumn('private_jwk', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .execute();

  await db.schema
    .createTable('enrollment_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('label', 'text')
    .addColumn('site', 'text')
    .addColumn('printer_names', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('device_id', 'text')
    .addColumn('created_by', 'text')
    .execute();
  await db.schema
    .createIndex('enrollment_tokens_tenant')
    .on('enrollment_tokens')
    .columns(['tenant_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('site', 'text')
    .addColumn('printer_names', 'text', (c) => c.notNull())
    .addColumn('facts', 'text', (c) => c.notNull())
    .addColumn('public_jwk', 'text', (c) => c.notNull())
    .addColumn('key_thumbprint', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('enrolled_at', 'text', (c) => c.notNull())
    .addColumn('key_rotated_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_seen_at', 'text')
    .execute();
  await db.schema.createIndex('devices_tenant').on('devices').columns(['tenant_id', 'enrolled_at']).execute();

  await db.schema
    .createTable('oauth_assertions')
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('jti', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_assertions_pk', ['client_id', 'jti'])
    .execute();
}
