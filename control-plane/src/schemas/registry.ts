import { ApiError } from '../http/index.js';
import { BATTERY } from './catalogue/battery.js';
import { ELECTRONICS } from './catalogue/electronics.js';
import { FURNITURE } from './catalogue/furniture.js';
import { TEXTILES } from './catalogue/textiles.js';
import type { CategorySchemaVersion } from './define.js';

/** The jurisdiction a product or a schema query uses when none is given. */
export const DEFAULT_JURISDICTION = 'EU';

export interface SchemaSelector {
  jurisdiction?: string | undefined;
  /** The instant (epoch ms) the schema must be effective at; now by default. */
  at?: number | undefined;
}

/** Whether a version is effective at an instant: `effectiveFrom <= at < effectiveUntil`. */
export function isEffectiveAt(v: CategorySchemaVersion, at: number): boolean {
  return (
    Date.parse(v.effectiveFrom) <= at && (v.effectiveUntil === null || at < Date.parse(v.effectiveUntil))
  );
}

/** Category names are matched case-insensitively and stored lower-case. */
export const canonicalCategory = (category: string): string => category.trim().toLowerCase();
/** Jurisdictions are matched case-insensitively and stored upper-case. */
export const canonicalJurisdiction = (j: string): string => j.trim().toUpperCase();

/**
 * The category schema registry: immutable, versioned schemas, each effective in one jurisdiction over a
 * window. A version is never edited; a new one supersedes it from a date, and both stay readable so a
 * product can be checked against the schema effective at any instant (point-in-time selection).
 */
export class SchemaRegistry {
  private readonly versions: readonly CategorySchemaVersion[];
  /** The effective windows as epoch ms, parsed once: resolve runs for every product written. */
  private readonly windows: readonly { v: CategorySchemaVersion; from: number; until: number }[];

  constructor(versions: readonly CategorySchemaVersion[]) {
    this.versions = [...versions].sort(
      (a, b) =>
        a.category.localeCompare(b.category) ||
        a.jurisdiction.localeCompare(b.jurisdiction) ||
        a.effectiveFrom.localeCompare(b.effectiveFrom),
    );
    this.windows = this.versions.map((v) => ({
      v,
      from: Date.parse(v.effectiveFrom),
      until: v.effectiveUntil === null ? Infinity : Date.parse(v.effectiveUntil),
    }));
  }

  /** Every category name, sorted. */
  categories(): string[] {
    return [...new Set(this.versions.map((v) => v.category))];
  }

  /** Every version, optionally of one jurisdiction, ordered by category then effective date. */
  all(jurisdiction?: string): CategorySchemaVersion[] {
    const j = jurisdiction === undefined ? undefined : canonicalJurisdiction(jurisdiction);
    return this.versions.filter((v) => j === undefined || v.jurisdiction === j);
  }

  /** The version of a category effective at `at` in the jurisdiction, if any. */
  resolve(category: string, selector: SchemaSelector = {}): CategorySchemaVersion | undefined {
    const c = canonicalCategory(category);
    const j = canonicalJurisdiction(selector.jurisdiction ?? DEFAULT_JURISDICTION);
    const at = selector.at ?? Date.now();
    return this.windows.find(
      (w) => w.v.category === c && w.v.jurisdiction === j && w.from <= at && at < w.until,
    )?.v;
  }

  /** Every field name any version of any category defines (CSV columns the ingest recognises). */
  allFieldNames(): Set<string> {
    return new Set(this.versions.flatMap((v) => Object.keys(v.fieldSchema.properties)));
  }

  /**
   * The typed miss: `SCHEMA_NOT_FOUND` listing `availableCategories` (those with a version effective at
   * the instant in the jurisdiction). The schema routes answer it as 404, product writes as 422
   * (api-v2.md: Products, Errors).
   */
  notFound(category: string, selector: SchemaSelector, status: 404 | 422): ApiError {
    const j = canonicalJurisdiction(selector.jurisdiction ?? DEFAULT_JURISDICTION);
    const at = selector.at ?? Date.now();
    const available = this.categories().filter((c) => this.resolve(c, { jurisdiction: j, at }));
    const err = new ApiError(
      'SCHEMA_NOT_FOUND',
      `No schema for category "${category}" is effective in ${j} at ${new Date(at).toISOString()}`,
      {
        details: {
          category,
          jurisdiction: j,
          at: new Date(at).toISOString(),
          availableCategories: available,
        },
      },
    );
    // SCHEMA_NOT_FOUND is 422 on product writes; the spec makes the schema read's miss a 404.
    if (status === 404) Object.assign(err, { status: 404 });
    return err;
  }
}

/** The registry shipped with the service. */
export const schemaRegistry = new SchemaRegistry([...ELECTRONICS, ...BATTERY, ...TEXTILES, ...FURNITURE]);
