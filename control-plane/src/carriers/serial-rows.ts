/**
 * Reads and writes a report's serials by their numbers. On PostgreSQL each serial is one probe of the
 * unique (tenant_id, seq) index, written as a LATERAL lookup per number: the plan then never depends on
 * table statistics. With `seq = ANY(...)` and statistics not yet refreshed after a bulk allocation
 * (autovacuum analyzes about a minute later), the planner scans the tenant's whole range instead, ~100x
 * slower on a million serials. SQLite always probes the index for an IN list and for a join with a VALUES
 * list.
 */
import { type CompiledQuery, type RawBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Database, Db } from '../store/index.js';
import { isPostgres, prepared } from '../store/index.js';
import { COUNTER_FORM } from './model.js';

/**
 * A registered serial's row, as the unique index of those serials says it (migration 0023): its text is not its
 * number. Written as the index's condition, so that both databases see the index applies. `s`: the alias.
 */
export function registeredSerial(s: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(`${s}.serial`)} <> cast(${sql.ref(`${s}.seq`)} as text)`;
}

/**
 * Batches (`b`) joined to their serials (`s`): a batch is a contiguous range of its tenant's numbers, so each
 * batch's serials are one range of the primary key (tenant_id, seq). How a product's serials are read (migration
 * 0024: no index of the serials by product). A CROSS JOIN, so that SQLite keeps the batches as the outer loop: with
 * an ORDER BY s.seq it would otherwise walk the tenant's serials in order and look up each one's batch.
 */
export function batchSerials(db: Db) {
  return db
    .selectFrom('carrier_batches as b')
    .crossJoin('carrier_serials as s')
    .whereRef('s.tenant_id', '=', 'b.tenant_id')
    .whereRef('s.seq', '>=', 'b.first_serial')
    .whereRef('s.seq', '<=', 'b.last_serial');
}

/**
 * The condition that finds a serial's row by its text (with the tenant's): a serial of the counter's form by
 * the number it is, the primary key (tenant_id, seq); any other in the unique index of registered serials. `s`:
 * the alias of carrier_serials.
 */
export function serialIs(s: string, serial: string): RawBuilder<SqlBool> {
  const text = sql`${sql.ref(`${s}.serial`)} = ${serial}`;
  return COUNTER_FORM.test(serial)
    ? sql<SqlBool>`${sql.ref(`${s}.seq`)} = ${serial} and ${text}`
    : sql<SqlBool>`${text} and ${registeredSerial(s)}`;
}

/**
 * In SQL, the number a serial's text is when it has the counter's form ({@link COUNTER_FORM}), else null: what a
 * list of serial texts is looked up by in the primary key. PostgreSQL is never asked to read a bigint from
 * letters or from more digits than the counter gives (the pattern is COUNTER_FORM's own; SQLite's GLOB spells it
 * as a leading digit 1-9, digits only, at most 12).
 */
function counterNumberOf(db: Db, text: RawBuilder<string>): RawBuilder<number | null> {
  return isPostgres(db)
    ? sql`case when ${text} ~ ${sql.lit(COUNTER_FORM.source)} then cast(${text} as bigint) end`
    : sql`case when ${text} glob '[1-9]*' and ${text} not glob '*[^0-9]*' and length(${text}) <= 12
        then cast(${text} as integer) end`;
}

export interface SerialRow {
  serial: string;
  seq: number;
  gtin: string;
  product_id: string;
  print_status: string | null;
  /** The product's GS1 Company Prefix length. */
  cpl: number;
}

/** What a report reads of each serial: the row and its product's company prefix length. */
const SERIAL_ROW_COLUMNS = [
  's.serial',
  's.seq',
  's.gtin',
  's.product_id',
  's.print_status',
  'p.company_prefix_length as cpl',
] as const;

/**
 * On PostgreSQL, the row (with its product's company prefix length) of each serial the from-item `named` lists, by
 * one index probe each: a LATERAL lookup with `limit 1`, which the planner cannot fold into a join whose plan would
 * rest on statistics (with a tenant's serials allocated after the last ANALYZE, a join read all of them).
 * `condition` finds a listed serial's row in `c` (carrier_serials); `lock` takes the rows FOR UPDATE.
 */
function probedSerialRows(
  named: RawBuilder<unknown>,
  tenantId: string,
  condition: RawBuilder<SqlBool>,
  lock = false,
): RawBuilder<SerialRow> {
  return sql<SerialRow>`
      select s.serial, s.seq, s.gtin, s.product_id, s.print_status, p.company_prefix_length as cpl
      from ${named}
      cross join lateral (
        select c.serial, c.seq, c.gtin, c.product_id, c.print_status from carrier_serials c
        where c.tenant_id = ${tenantId} and ${condition} limit 1 ${lock ? sql`for update` : sql``}
      ) s
      join products p on p.id = s.product_id`;
}

/**
 * The tenant's serials among these numbers, with their product's company prefix length. On PostgreSQL the
 * rows are locked (FOR UPDATE) until the transaction ends, so what a report decides from print_status
 * ("newly printed, so commissioned") holds until it commits: a concurrent report of the same serial waits,
 * then reads the committed outcome. Callers pass numbers in ascending order, so two reports lock in the
 * same order and never deadlock.
 */
export async function lookupSerials(
  trx: Db,
  tenantId: string,
  seqs: readonly number[],
): Promise<SerialRow[]> {
  if (seqs.length === 0) return [];
  if (isPostgres(trx)) {
    const named = sql`unnest(${[...seqs]}::bigint[]) as named(seq)`;
    return (await probedSerialRows(named, tenantId, sql<SqlBool>`c.seq = named.seq`, true).execute(trx)).rows;
  }
  return trx
    .selectFrom('carrier_serials as s')
    .innerJoin('products as p', 'p.id', 's.product_id')
    .select(SERIAL_ROW_COLUMNS)
    .where('s.tenant_id', '=', tenantId)
    .where('s.seq', 'in', [...seqs])
    .execute();
}

/**
 * The tenant's registered serials (those not of the counter's form, so their number is not their text)
 * among these, by their unique index (tenant_id, serial); locked like {@link lookupSerials}. Callers pass them
 * sorted, so concurrent reports lock in one order.
 */
export async function lookupSerialsByText(
  trx: Db,
  tenantId: string,
  serials: readonly string[],
): Promise<SerialRow[]> {
  if (serials.length === 0) return [];
  let q = trx
    .selectFrom('carrier_serials as s')
    .innerJoin('products as p', 'p.id', 's.product_id')
    .select(SERIAL_ROW_COLUMNS)
    .where('s.tenant_id', '=', tenantId)
    .where('s.serial', 'in', [...serials])
    .where(registeredSerial('s'))
    .orderBy('s.serial');
  if (isPostgres(trx)) q = q.forUpdate('s');
  return q.execute();
}

/**
 * The tenant's rows of the serials a subquery names, as one read among others (store/read-set.ts): the caller
 * reads them in the same round trip as what names them. Those of the counter's form by the number they are (the
 * primary key), the others by the unique index of registered serials. The rows are not locked, so a write that
 * depends on their print_status is guarded by it ({@link printWrite} with `previous` on each row).
 *
 * On PostgreSQL each named serial is one probe of an index ({@link probedSerialRows}, as {@link lookupSerials}
 * reads): as a semi-join the plan depended on statistics, and with a tenant's serials allocated after the last
 * ANALYZE it read all of them for every batch (2,000 rows, 0.7 ms of PostgreSQL's time on the benchmark's floor,
 * growing with the tenant).
 */
export function serialRowsQuery(
  db: Db,
  tenantId: string,
  serials: SelectQueryBuilder<Database, keyof Database, { serial: string }>,
): CompiledQuery<SerialRow> {
  if (isPostgres(db)) {
    const named = sql`(select distinct n.serial from (${serials}) as n) as named`;
    const counted = sql<SqlBool>`c.seq = ${counterNumberOf(db, sql.ref('named.serial'))}`;
    const registered = sql<SqlBool>`c.serial = named.serial and ${registeredSerial('c')}`;
    return sql<SerialRow>`${probedSerialRows(named, tenantId, counted)}
      union all
      ${probedSerialRows(named, tenantId, registered)}`.compile(db);
  }
  const rows = () =>
    db
      .selectFrom('carrier_serials as s')
      .innerJoin('products as p', 'p.id', 's.product_id')
      .select(SERIAL_ROW_COLUMNS)
      .where('s.tenant_id', '=', tenantId);
  const named = db.selectFrom(serials.as('named'));
  const counted = rows().where(
    's.seq',
    'in',
    named.select(counterNumberOf(db, sql.ref('named.serial')).as('seq')),
  );
  const registered = rows()
    .where('s.serial', 'in', named.select('named.serial'))
    .where(registeredSerial('s'));
  return counted.unionAll(registered).compile();
}

/** What the serials of one UPDATE share of metadata.print. */
export interface SharedPrintColumns {
  print_status: string;
  print_reason: string | null;
  print_reported_at: string;
  print_source: string;
}

/** A serial's own part of metadata.print: the device it printed on and its report. */
export interface PrintRow {
  seq: number;
  deviceId: string | null;
  reportRef: string;
  /**
   * The print_status the report read, when it read it without a lock: the row is written only if it still
   * has it (the caller checks the count).
   */
  previous?: string | null;
}

/**
 * Sets metadata.print of the tenant's serials with these numbers, wholesale: the shared columns, and each
 * row's own device and report (the reports of several print jobs are written by one statement).
 */
export async function writePrint(
  trx: Db,
  tenantId: string,
  rows: readonly PrintRow[],
  set: SharedPrintColumns,
): Promise<void> {
  if (rows.length === 0) return;
  await trx.executeQuery(printWrite(trx, tenantId, rows, set));
}

/**
 * The UPDATE of {@link writePrint}, for a write set. Rows that carry `previous` are written only while their
 * print_status is still that (all of them or none: they come from one read); the statement then changes
 * fewer rows than it names when one moved, which the caller's expectation catches.
 */
export function printWrite(
  trx: Db,
  tenantId: string,
  rows: readonly PrintRow[],
  set: SharedPrintColumns,
): CompiledQuery {
  return printUpdate(trx, tenantId, rows, set);
}

const printUpdate = prepared(
  (trx: Db, tenantId: string, rows: readonly PrintRow[], set: SharedPrintColumns) => {
    const guarded = rows.some((r) => r.previous !== undefined);
    if (isPostgres(trx)) {
      const still = guarded ? sql`and print_status is not distinct from u.previous` : sql``;
      return sql`
      update carrier_serials c set
        print_status = ${set.print_status}, print_reason = ${set.print_reason},
        print_reported_at = ${set.print_reported_at}, print_source = ${set.print_source},
        print_device_id = x.device_id, print_report_ref = x.report_ref
      from (
        select t.ctid, u.device_id, u.report_ref
        from unnest(
          ${rows.map((r) => r.seq)}::bigint[], ${rows.map((r) => r.deviceId)}::text[],
          ${rows.map((r) => r.reportRef)}::text[], ${rows.map((r) => r.previous ?? null)}::text[]
        ) as u(seq, device_id, report_ref, previous)
        cross join lateral (
          select ctid from carrier_serials where tenant_id = ${tenantId} and seq = u.seq ${still} limit 1
        ) t
      ) x
      where c.ctid = x.ctid`.compile(trx);
    }
    // A VALUES list names its columns column1, column2, ...: (seq, device, report, previous) of each row.
    const still = guarded ? sql`and carrier_serials.print_status is x.column4` : sql``;
    return sql`
    update carrier_serials set
      print_status = ${set.print_status}, print_reason = ${set.print_reason},
      print_reported_at = ${set.print_reported_at}, print_source = ${set.print_source},
      print_device_id = x.column2, print_report_ref = x.column3
    from (values ${sql.join(rows.map((r) => sql`(${r.seq}, ${r.deviceId}, ${r.reportRef}, ${r.previous ?? null})`))}) as x
    where carrier_serials.tenant_id = ${tenantId} and carrier_serials.seq = x.column1 ${still}`.compile(trx);
  },
);
