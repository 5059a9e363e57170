import { ApiError, parseBoundedJson } from '../http/index.js';
import {
  DEFAULT_JURISDICTION,
  PRODUCT_COLUMNS,
  REQUIRED_PRODUCT_COLUMNS,
  type FieldDefinition,
  type SchemaRegistry,
} from '../schemas/index.js';
import { CsvParser, CsvSyntaxError, type CsvRecord } from './csv.js';
import { JsonItemsParser, JsonSyntaxError, NdjsonParser } from './json-items.js';

export const INGEST_FORMATS = ['csv', 'json', 'ndjson'] as const;
export type IngestFormat = (typeof INGEST_FORMATS)[number];

/** One row of an upload (1-based): a raw create item, or why the row could not even be read. */
export type UploadRow = { row: number; value: unknown } | { row: number; error: ApiError };

/** Reads an upload incrementally into rows. Syntax errors of the whole document throw a 400 ApiError. */
export interface RowReader {
  push(text: string): UploadRow[];
  end(): UploadRow[];
  /** Top-level members of a JSON object upload other than `items` (empty for other formats). */
  members(): ReadonlyMap<string, unknown>;
}

export interface RowReaderDeps {
  registry: SchemaRegistry;
  now: () => number;
  /**
   * Only check the document (syntax, CSV header, field counts) and count rows; each row's value is
   * null. The upload uses it to refuse a malformed file before accepting it, without building items.
   */
  checkOnly?: boolean;
}

function syntax(err: unknown): never {
  if (err instanceof CsvSyntaxError) {
    throw ApiError.validation('body', err.message, { line: err.line });
  }
  if (err instanceof JsonSyntaxError) {
    throw ApiError.validation('body', err.message, { position: err.position });
  }
  throw err;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 'yes', '1']);
const FALSE = new Set(['false', 'no', '0']);

/**
 * A CSV cell as the type its schema field has: numbers and booleans parsed (true/false, yes/no, 1/0),
 * arrays split on `|` (or read as a JSON array when the cell starts with `[`). A cell that does not
 * read as its type stays a string, so the schema check names the field and the expected type.
 */
export function coerceCell(def: FieldDefinition | undefined, cell: string): unknown {
  const v = cell.trim();
  switch (def?.type) {
    case 'number':
    case 'integer':
      return NUMBER.test(v) ? Number(v) : cell;
    case 'boolean':
      return TRUE.has(v.toLowerCase()) ? true : FALSE.has(v.toLowerCase()) ? false : cell;
    case 'array':
      if (v.startsWith('[')) {
        try {
          return parseBoundedJson(v);
        } catch {
          return cell;
        }
      }
      return v
        .split('|')
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
    default:
      return cell;
  }
}

const BASE = new Set<string>(PRODUCT_COLUMNS);

class CsvRowReader implements RowReader {
  private readonly parser = new CsvParser();
  private header: string[] | undefined;
  private row = 0;
  private readonly known: Set<string>;
  /** Field definitions per category and jurisdiction, resolved once per reader. */
  private readonly fieldsOf = new Map<string, Readonly<Record<string, FieldDefinition>> | undefined>();

  constructor(private readonly deps: RowReaderDeps) {
    this.known = deps.registry.allFieldNames();
  }

  members(): ReadonlyMap<string, unknown> {
    return new Map();
  }

  push(text: string): UploadRow[] {
    try {
      return this.records(this.parser.push(text));
    } catch (err) {
      return syntax(err);
    }
  }

  end(): UploadRow[] {
    let rows: UploadRow[];
    try {
      rows = this.records(this.parser.end());
    } catch (err) {
      return syntax(err);
    }
    if (!this.header) throw ApiError.validation('body', 'The CSV upload is empty: it needs a header line');
    return rows;
  }

  private checkHeader(fields: string[]): string[] {
    const header = fields.map((f) => f.trim());
    const seen = new Set<string>();
    for (const col of header) {
      if (seen.has(col)) throw ApiError.validation('header', `header: the column "${col}" appears twice`);
      seen.add(col);
      if (!BASE.has(col) && !this.known.has(col)) {
        throw ApiError.validation('header', `header: unknown column "${col}"`, {
          column: col,
          hint: 'Use the columns of GET /api/v2/schemas/categories/{category}/import-template',
        });
      }
    }
    const missing = REQUIRED_PRODUCT_COLUMNS.filter((c) => !seen.has(c));
    if (missing.length > 0) {
      throw ApiError.validation(
        'header',
        `header: missing column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`,
        {
          missing,
        },
      );
    }
    return header;
  }

  private records(records: CsvRecord[]): UploadRow[] {
    const out: UploadRow[] = [];
    for (const r of records) {
      if (!this.header) {
        this.header = this.checkHeader(r.fields);
        continue;
      }
      const row = ++this.row;
      if (r.fields.length !== this.header.length) {
        out.push({
          row,
          error: ApiError.validation(
            'row',
            `row has ${r.fields.length} fields, the header has ${this.header.length} (CSV line ${r.line})`,
          ),
        });
        continue;
      }
      out.push({ row, value: this.deps.checkOnly ? null : this.toItem(this.header, r.fields) });
    }
    return out;
  }

  private toItem(header: string[], fields: string[]): Record<string, unknown> {
    const item: Record<string, unknown> = {};
    const cells: [string, string][] = [];
    header.forEach((col, i) => {
      const cell = fields[i]!;
      if (cell === '') return;
      if (BASE.has(col))
        item[col] = col === 'companyPrefixLength' && /^\s*\d+\s*$/.test(cell) ? Number(cell) : cell;
      else cells.push([col, cell]);
    });
    if (cells.length > 0) {
      const category = typeof item.category === 'string' ? item.category : '';
      const jurisdiction = typeof item.jurisdiction === 'string' ? item.jurisdiction : DEFAULT_JURISDICTION;
      const key = `${category}\u0000${jurisdiction}`;
      if (!this.fieldsOf.has(key)) {
        const schema = this.deps.registry.resolve(category, { jurisdiction, at: this.deps.now() });
        this.fieldsOf.set(key, schema?.fieldSchema.properties);
      }
      const props = this.fieldsOf.get(key);
      item.extensions = Object.fromEntries(
        cells.map(([col, cell]) => [
          col,
          coerceCell(props && Object.hasOwn(props, col) ? props[col] : undefined, cell),
        ]),
      );
    }
    return item;
  }
}

class JsonRowReader implements RowReader {
  private readonly parser = new JsonItemsParser();
  private row = 0;

  members(): ReadonlyMap<string, unknown> {
    return this.parser.members;
  }

  push(text: string): UploadRow[] {
    try {
      return this.parser.push(text).map((value) => ({ row: ++this.row, value }));
    } catch (err) {
      return syntax(err);
    }
  }

  end(): UploadRow[] {
    try {
      return this.parser.end().map((value) => ({ row: ++this.row, value }));
    } catch (err) {
      return syntax(err);
    }
  }
}

class NdjsonRowReader implements RowReader {
  private readonly parser = new NdjsonParser();
  private row = 0;

  members(): ReadonlyMap<string, unknown> {
    return new Map();
  }

  private rows(lines: ReturnType<NdjsonParser['push']>): UploadRow[] {
    return lines.map((l) => {
      const row = ++this.row;
      return 'error' in l ? { row, error: ApiError.validation('row', l.error) } : { row, value: l.value };
    });
  }

  push(text: string): UploadRow[] {
    try {
      return this.rows(this.parser.push(text));
    } catch (err) {
      return syntax(err);
    }
  }

  end(): UploadRow[] {
    return this.rows(this.parser.end());
  }
}

export function createRowReader(format: IngestFormat, deps: RowReaderDeps): RowReader {
  if (format === 'csv') return new CsvRowReader(deps);
  if (format === 'json') return new JsonRowReader();
  return new NdjsonRowReader();
}
