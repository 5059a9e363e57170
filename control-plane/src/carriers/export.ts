import { Readable } from 'node:stream';
import type { EpcScheme } from '@dpp/shared';
import type { Db } from '../store/index.js';
import { labelCodes, type LabelCodes } from './codes.js';
import { EXPORT_PAGE_SIZE, type PrintState } from './model.js';

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

/**
 * The matching serials in serial order, one page at a time. Each page is its own short query (keyset on
 * the serial number), so an export of any size holds no query open between pages (on SQLite a long read
 * would hold up every other request) and keeps memory flat. Codes use the product's current company
 * prefix length and the public base URL.
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

  let after = filter.range ? filter.range.first - 1 : 0;
  for (;;) {
    let q = db
      .selectFrom('carrier_serials')
      .select(['seq', 'serial', 'gtin', 'product_id', 'epc_scheme'])
      .where('tenant_id', '=', filter.tenantId)
      .where('seq', '>', after);
    if (filter.productId !== undefined) q = q.where('product_id', '=', filter.productId);
    if (filter.range) q = q.where('seq', '<=', filter.range.last);
    if (filter.printState === 'pending') q = q.where('print_status', 'is', null);
    else if (filter.printState !== undefined) q = q.where('print_status', '=', filter.printState);
    const rows = await q.orderBy('seq').limit(pageSize).execute();
    if (rows.length === 0) return;
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
    if (rows.length < pageSize) return;
    after = Number(rows[rows.length - 1]!.seq);
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
