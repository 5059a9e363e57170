import { Readable } from 'node:stream';
import type { EpcScheme } from '@dpp/shared';
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Db } from '../store/index.js';
import { labelCodes, type LabelCodes } from './codes.js';
import { EXPORT_PAGE_SIZE, type PrintState } from './model.js';
import { batchSerials } from './serial-rows.js';

/**
 * One line of the print file: api-v2.md's columns gtin, serial, digital_link, sgtin96_epc (empty for a serial
 * encoded as SGTIN-198), then sgtin198_epc (empty for SGTIN-96) and element_string (`(01)…(21)…`).
 */
export interface ExportRow {
  gtin: string;
  serial: string;
  digital_link: string;
  sgtin96_epc: string;
  sgtin198_epc: string;
  element_string: string;
}

export interface ExportFilter {
  tenantId: string;
  productId?: string | undefined;
  /** A batch is a contiguous range of the tenant's serials. */
  range?: { first: number; last: number } | undefined;
  printState?: PrintState | undefined;
}

export type ExportFormat = 'csv' | 'json';

/** What a page read gives of a serial: enough for its codes. */
interface SerialRow {
  seq: number;
  serial: string;
  gtin: string;
  product_id: string;
  epc_scheme: string;
}

const SERIAL_COLUMNS = ['s.seq', 's.serial', 's.gtin', 's.product_id', 's.epc_scheme'] as const;

/** The export's print-state filter on the serials' rows (`s`), if it has one. */
function printStateIs(printState: PrintState | undefined): RawBuilder<SqlBool> | undefined {
  if (printState === 'pending') return sql<SqlBool>`s.print_status is null`;
  if (printState !== undefined) return sql<SqlBool>`s.print_status = ${printState}`;
  return undefined;
}

/**
 * The serials of `filter` numbered in (after, last], in serial order, at most `limit`: a range of the primary key
 * `(tenant_id, seq)`, the rest of the tenant's when `last` is absent.
 */
function rangeRows(
  db: Db,
  filter: ExportFilter,
  after: number,
  last: number | undefined,
  limit?: number,
): Promise<SerialRow[]> {
  let q = db
    .selectFrom('carrier_serials as s')
    .select(SERIAL_COLUMNS)
    .where('s.tenant_id', '=', filter.tenantId)
    .where('s.seq', '>', after);
  if (last !== undefined) q = q.where('s.seq', '<=', last);
  if (filter.productId !== undefined) q = q.where('s.product_id', '=', filter.productId);
  const printState = printStateIs(filter.printState);
  if (printState) q = q.where(printState);
  q = q.orderBy('s.seq');
  return (limit === undefined ? q : q.limit(limit)).execute();
}

/**
 * Every serial of `filter` after `after` in the product's batches whose ranges start from `first` to `lastFirst`
 * (together at most a page of serials), in serial order: each batch's range read by the primary key.
 */
function batchGroupRows(
  db: Db,
  filter: ExportFilter & { productId: string },
  first: number,
  lastFirst: number,
  after: number,
): Promise<SerialRow[]> {
  let q = batchSerials(db)
    .select(SERIAL_COLUMNS)
    .where('b.tenant_id', '=', filter.tenantId)
    .where('b.product_id', '=', filter.productId)
    .where('b.first_serial', '>=', first)
    .where('b.first_serial', '<=', lastFirst)
    .where('s.seq', '>', after);
  const printState = printStateIs(filter.printState);
  if (printState) q = q.where(printState);
  return q.orderBy('s.seq').execute();
}

/** A contiguous range of a tenant's serial numbers: a batch's. */
interface Span {
  first: number;
  last: number;
}

const numbers = (b: Span): number => b.last - b.first + 1;

/**
 * Where an export's spans come from: `after` lists those that start after a number, in order; `together`, for a
 * product's batches, reads several whole ones at once (those starting from `first` to `lastFirst`, their serials
 * after `after`).
 */
interface Spans {
  after(first: number): Promise<Span[]>;
  together?(first: number, lastFirst: number, after: number): Promise<SerialRow[]>;
}

/** The product's batches starting after `after`, in serial order, at most `limit` (its unique index by start). */
async function batchesAfter(
  db: Db,
  filter: ExportFilter & { productId: string },
  after: number,
  limit: number,
): Promise<Span[]> {
  const rows = await db
    .selectFrom('carrier_batches')
    .select(['first_serial', 'last_serial'])
    .where('tenant_id', '=', filter.tenantId)
    .where('product_id', '=', filter.productId)
    .where('first_serial', '>', after)
    .orderBy('first_serial')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ first: Number(r.first_serial), last: Number(r.last_serial) }));
}

/** Every matching serial of the tenant in pages: a keyset on the serial number, serials allocated meanwhile too. */
async function* tenantPages(db: Db, filter: ExportFilter, pageSize: number): AsyncGenerator<SerialRow[]> {
  let after = 0;
  for (;;) {
    const rows = await rangeRows(db, filter, after, undefined, pageSize);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < pageSize) return;
    after = Number(rows[rows.length - 1]!.seq);
  }
}

/**
 * The matching serials of spans of the tenant's numbers (one batch's, or a product's batches, as `source` lists
 * them), in pages; every page but the last is full.
 *
 * Every serial number in a span is a serial of it, so each read is bounded by numbers, not by a LIMIT: a window of
 * at most the page's room of a span, or several whole spans that fit in it together (read in one statement through
 * their batches, so a product of many small batches, registered one serial at a time, takes a few statements a page,
 * not one a batch). What a read touches is then never more than a page, whatever plan the database picks: with a
 * batch's end as the only bound and statistics not yet refreshed after an allocation, PostgreSQL read the rest of
 * the batch and sorted it for each page. A print-state filter leaves windows short of a page; the next window fills
 * it.
 */
async function* spanPages(
  db: Db,
  filter: ExportFilter,
  source: Spans,
  pageSize: number,
): AsyncGenerator<SerialRow[]> {
  let page: SerialRow[] = [];
  let after = 0; // the last serial number read
  let spans: Span[] = [];
  let next = 0; // the next span of `spans` to read
  for (;;) {
    if (next === spans.length) {
      spans = await source.after(spans.at(-1)?.first ?? 0);
      next = 0;
      if (spans.length === 0) break;
    }
    const room = pageSize - page.length;
    const span = spans[next]!;
    const from = Math.max(after, span.first - 1);
    // This span's numbers left, and the whole spans after it that fit in the page's room with them.
    let end = next;
    let fitting = span.last - from;
    while (end + 1 < spans.length && fitting + numbers(spans[end + 1]!) <= room) {
      end += 1;
      fitting += numbers(spans[end]!);
    }
    if (end > next && source.together) {
      page.push(...(await source.together(span.first, spans[end]!.first, from)));
      after = spans[end]!.last;
      next = end + 1;
    } else {
      after = Math.min(span.last, from + room);
      page.push(...(await rangeRows(db, filter, from, after)));
      if (after === span.last) next += 1;
    }
    if (page.length === pageSize) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/** The serial pages of an export: of one batch's range, of a product's batches, or of the whole tenant. */
function serialPages(db: Db, filter: ExportFilter, pageSize: number): AsyncGenerator<SerialRow[]> {
  const { range, productId } = filter;
  if (range !== undefined) {
    const after = (first: number) => Promise.resolve(first < range.first ? [range] : []);
    return spanPages(db, filter, { after }, pageSize);
  }
  if (productId !== undefined) {
    const product = { ...filter, productId };
    return spanPages(
      db,
      filter,
      {
        after: (first) => batchesAfter(db, product, first, pageSize),
        together: (first, lastFirst, after) => batchGroupRows(db, product, first, lastFirst, after),
      },
      pageSize,
    );
  }
  return tenantPages(db, filter, pageSize);
}

/**
 * The pages of `pages`, each next one asked for as soon as the one before it arrives: the database reads a page
 * while this process turns the last into text (a 300,000-row PostgreSQL export: 106,000-112,000 rows a second
 * against 88,000-111,000 without). One page ahead at most, so memory stays flat.
 */
export async function* readAhead<T>(pages: AsyncGenerator<T>): AsyncGenerator<T> {
  const ask = () => {
    const page = pages.next();
    // A read that fails before its page is wanted fails the export when it is; never unhandled, even when the
    // reader has stopped by then.
    page.catch(() => undefined);
    return page;
  };
  let next = ask();
  try {
    for (;;) {
      const page = await next;
      if (page.done) return;
      next = ask();
      yield page.value;
    }
  } finally {
    await pages.return(undefined);
  }
}

/**
 * The matching serials in serial order, one page at a time. Each page is read by its own short statements (by
 * serial number), so an export of any size holds no query open between pages (on SQLite a long read would hold
 * up every other request) and keeps memory flat. Codes use the product's current company prefix length and the
 * public base URL.
 */
export async function* exportPages(
  db: Db,
  publicBaseUrl: string,
  filter: ExportFilter,
  pageSize: number = EXPORT_PAGE_SIZE,
): AsyncGenerator<ExportRow[]> {
  const codes = new Map<string, LabelCodes>();
  const codesFor = async (productId: string, gtin: string): Promise<LabelCodes> => {
    const key = `${productId}|${gtin}`;
    let c = codes.get(key);
    if (!c) {
      const product = await db
        .selectFrom('products')
        .select('company_prefix_length')
        .where('tenant_id', '=', filter.tenantId)
        .where('id', '=', productId)
        .executeTakeFirstOrThrow();
      c = labelCodes(publicBaseUrl, gtin, product.company_prefix_length);
      codes.set(key, c);
    }
    return c;
  };

  for await (const rows of readAhead(serialPages(db, filter, pageSize))) {
    const page: ExportRow[] = [];
    for (const r of rows) {
      const c = await codesFor(r.product_id, r.gtin);
      const epc = c.epc(r.serial, r.epc_scheme as EpcScheme);
      page.push({
        gtin: r.gtin,
        serial: r.serial,
        digital_link: c.digitalLink(r.serial),
        sgtin96_epc: epc.scheme === 'sgtin-96' ? epc.hex : '',
        sgtin198_epc: epc.scheme === 'sgtin-198' ? epc.hex : '',
        element_string: c.elementString(r.serial),
      });
    }
    yield page;
  }
}

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export const CSV_HEADER = 'gtin,serial,digital_link,sgtin96_epc,sgtin198_epc,element_string';

/**
 * Rows per chunk of text written to the response. A page is turned into text at once, so its row
 * objects die young, and the text goes out in small chunks that V8 keeps in its young generation; a
 * whole page as one string (or rows kept alive while the client reads) would be promoted to the old
 * generation and make the process grow until a major collection.
 */
const TEXT_CHUNK_ROWS = 250;

function chunked<T>(rows: readonly T[], format: (rows: readonly T[]) => string): string[] {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += TEXT_CHUNK_ROWS) out.push(format(rows.slice(i, i + TEXT_CHUNK_ROWS)));
  return out;
}

const csvLines = (rows: readonly ExportRow[]): string => {
  let out = '';
  for (const r of rows) {
    out += `${r.gtin},${csvField(r.serial)},${csvField(r.digital_link)},${r.sgtin96_epc},${r.sgtin198_epc},${csvField(r.element_string)}\r\n`;
  }
  return out;
};

async function* csvText(pages: AsyncIterable<ExportRow[]>): AsyncGenerator<string> {
  yield `${CSV_HEADER}\r\n`;
  for await (const page of pages) yield* chunked(page, csvLines);
}

async function* jsonText(pages: AsyncIterable<ExportRow[]>): AsyncGenerator<string> {
  yield '{"data":[';
  let first = true;
  for await (const page of pages) {
    for (const text of chunked(page, (rows) => rows.map((r) => JSON.stringify(r)).join(','))) {
      yield (first ? '' : ',') + text;
      first = false;
    }
  }
  yield ']}';
}

/** The print file as a byte stream: CSV (RFC 4180, CRLF) or JSON `{ "data": [ ... ] }`. */
export function exportStream(pages: AsyncIterable<ExportRow[]>, format: ExportFormat): Readable {
  return Readable.from(format === 'csv' ? csvText(pages) : jsonText(pages), { objectMode: false });
}
