import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * An allocated serial's key is its tenant's counter number, `(tenant_id, seq)`, instead of its text.
 *
 * A serial the counter allocated is its number written out (`serial = cast(seq as text)`); a registered serial
 * never has that form (register.ts refuses every decimal without a leading zero). So the text is unique within a
 * tenant when the number is, and when the registered serials' texts are: the primary key by number, and a unique
 * index of only the serials whose text is not their number. The check `carrier_serials_form` keeps the two kinds
 * apart in the database itself.
 *
 * The key by text held every serial, and an allocation's new keys land between the old ones (`"500001"` sorts
 * between `"50000"` and `"50001"`): in psql on a table of 500,000 serials, an INSERT of 10,000 took 57 ms with
 * it and 37 ms with the key by number, whose new keys go at the end. The unique index by number was already
 * there (the export's order); on PostgreSQL it becomes the primary key. SQLite cannot change a table's primary
 * key: the table is rebuilt with the same columns and its rows copied.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table carrier_serials drop constraint carrier_serials_pk`.execute(db);
    await sql`alter table carrier_serials add constraint carrier_serials_pk
      primary key using index carrier_serials_tenant_seq`.execute(db);
    await sql`alter table carrier_serials add constraint carrier_serials_form
      check (serial = cast(seq as text) or serial !~ '^[1-9][0-9]*$')`.execute(db);
  } else {
    await sql`create table carrier_serials_keyed (
      tenant_id text not null,
      serial text not null,
      seq bigint not null,
      product_id text not null,
      gtin text not null,
      batch_id text not null,
      allocated_at text not null,
      print_status text,
      print_reason text,
      print_device_id text,
      print_reported_at text,
      print_source text,
      print_report_ref text,
      epc_scheme text default 'sgtin-96' not null,
      constraint carrier_serials_pk primary key (tenant_id, seq),
      constraint carrier_serials_form
        check (serial = cast(seq as text) or serial not glob '[1-9]*' or serial glob '*[^0-9]*')
    )`.execute(db);
    await sql`insert into carrier_serials_keyed
      select tenant_id, serial, seq, product_id, gtin, batch_id, allocated_at, print_status, print_reason,
        print_device_id, print_reported_at, print_source, print_report_ref, epc_scheme
      from carrier_serials`.execute(db);
    await sql`drop table carrier_serials`.execute(db);
    await sql`alter table carrier_serials_keyed rename to carrier_serials`.execute(db);
    await db.schema
      .createIndex('carrier_serials_product_seq')
      .on('carrier_serials')
      .columns(['tenant_id', 'product_id', 'seq'])
      .execute();
    await db.schema
      .createIndex('carrier_serials_gtin_seq')
      .on('carrier_serials')
      .columns(['gtin', 'seq'])
      .execute();
    await sql`create index carrier_serials_gtin_registered on carrier_serials (gtin, serial)
      where serial <> cast(seq as text)`.execute(db);
  }
  await sql`create unique index carrier_serials_tenant_registered on carrier_serials (tenant_id, serial)
    where serial <> cast(seq as text)`.execute(db);
}
