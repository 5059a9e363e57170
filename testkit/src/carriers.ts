/** Test helpers of the carriers suites: products through the API, batches, CSV parsing, events. */
import { computeGs1CheckDigit } from '@dpp/shared';
import { expect } from 'vitest';
import { demoProductBody } from '@dpp/control-plane';
import type { TestControlPlane } from './index.js';

let nextItem = Math.floor(Math.random() * 90_000);

/** A fresh valid GTIN-14 under company prefix 0950600 (7 digits). */
export function freshGtin(): string {
  nextItem = (nextItem + 1) % 100_000;
  const body = `10950600${String(nextItem).padStart(5, '0')}`;
  return body + String(computeGs1CheckDigit(body));
}

/** Creates an electronics product through POST /api/v2/products and returns its id and GTIN. */
export async function createProduct(
  t: TestControlPlane,
  key: string,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; gtin: string }> {
  const res = await t.call('POST', '/api/v2/products', {
    key,
    body: demoProductBody({
      name: 'Phone X',
      description: 'A repairable smartphone for the print loop tests',
      gtin: freshGtin(),
      ...overrides,
    }),
  });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id as string, gtin: res.body.gtin as string };
}

/** POST /carriers/batch, expecting 201. */
export async function allocate(
  t: TestControlPlane,
  key: string,
  productId: string,
  count: number,
): Promise<{ batchId: string; serials: string[]; exportPath: string; gtin: string }> {
  const res = await t.call('POST', '/api/v2/carriers/batch', { key, body: { productId, count } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export interface CsvRow {
  gtin: string;
  serial: string;
  digital_link: string;
  sgtin96_epc: string;
  sgtin198_epc: string;
  element_string: string;
}

export const EXPORT_COLUMNS = [
  'gtin',
  'serial',
  'digital_link',
  'sgtin96_epc',
  'sgtin198_epc',
  'element_string',
] as const;

/** The fields of one RFC 4180 line (quoted fields with doubled quotes; no line breaks inside a field). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  const re = /(?:^|,)(?:"((?:[^"]|"")*)"|([^,"]*))/g;
  for (const m of line.matchAll(re)) fields.push(m[1] !== undefined ? m[1].replace(/""/g, '"') : m[2]!);
  return fields;
}

/** Parses the export CSV, checking the header and that every line has every column. */
export function parseCsv(text: string): CsvRow[] {
  const lines = text.split('\r\n');
  expect(lines[0]).toBe(EXPORT_COLUMNS.join(','));
  expect(lines[lines.length - 1]).toBe('');
  return lines.slice(1, -1).map((line) => {
    const fields = csvFields(line);
    expect(fields, line).toHaveLength(EXPORT_COLUMNS.length);
    return Object.fromEntries(EXPORT_COLUMNS.map((c, i) => [c, fields[i]!])) as unknown as CsvRow;
  });
}

/** GET /carriers/export as CSV with the given query, expecting 200. */
export async function exportCsv(t: TestControlPlane, key: string, query: string): Promise<CsvRow[]> {
  const res = await t.call('GET', `/api/v2/carriers/export?${query}`, { key });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
  return parseCsv(res.text);
}

export interface StoredEvent {
  type: string;
  resource_type: string | null;
  resource_id: string | null;
  data: Record<string, unknown>;
}

/** The domain events of a tenant of the given type, oldest first. */
export async function eventsOf(t: TestControlPlane, tenantId: string, type: string): Promise<StoredEvent[]> {
  const rows = await t.cp.store.db
    .selectFrom('events')
    .select(['type', 'resource_type', 'resource_id', 'data', 'occurred_at'])
    .where('tenant_id', '=', tenantId)
    .where('type', '=', type)
    .orderBy('occurred_at')
    .execute();
  return rows.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
}
