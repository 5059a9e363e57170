import { type Kysely, sql } from 'kysely';

/**
 * EPC schemes beyond SGTIN-96 and carriers beyond the QR code (issue 20).
 *
 * - `products.epc_scheme`: `auto` (SGTIN-96 when the serial fits, SGTIN-198 otherwise), `sgtin-96` or
 *   `sgtin-198`.
 * - `carrier_serials.epc_scheme`: the scheme each serial was given when it was allocated or registered;
 *   every serial before this migration came from the counter and is SGTIN-96.
 * - `print_jobs.epc_scheme` and `epc_hex`: the EPC the job's tag carries, whatever its scheme; existing jobs
 *   copy their SGTIN-96. `sgtin96_epc` stays NOT NULL (SQLite cannot drop the constraint without rebuilding
 *   the table and its indexes): a job whose EPC is an SGTIN-198 keeps the empty string there.
 * - `print_jobs.requires_nfc`: like `requires_rfid`, only a printer with an NFC encoder may claim the job.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('products')
    .addColumn('epc_scheme', 'text', (c) => c.notNull().defaultTo('auto'))
    .execute();
  await db.schema
    .alterTable('carrier_serials')
    .addColumn('epc_scheme', 'text', (c) => c.notNull().defaultTo('sgtin-96'))
    .execute();
  await db.schema
    .alterTable('print_jobs')
    .addColumn('epc_scheme', 'text', (c) => c.notNull().defaultTo('sgtin-96'))
    .execute();
  await db.schema.alterTable('print_jobs').addColumn('epc_hex', 'text').execute();
  await db.schema
    .alterTable('print_jobs')
    .addColumn('requires_nfc', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update print_jobs set epc_hex = sgtin96_epc`.execute(db);
}
