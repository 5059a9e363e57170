/**
 * Which obligations apply to a context (region, product category, lifecycle stage, date), from the pack
 * versions effective at that date, at or above a priority. Point in time, like category schemas: a date before
 * a supersession selects from the version effective then.
 */
import type { LifecycleStage, Obligation, Priority } from './pack-format.js';
import { type PackEntry, effectiveAt } from './packs.js';

export interface SelectionContext {
  region: string;
  productCategory: string;
  lifecycleStage: LifecycleStage;
  /** ISO 8601. */
  effectiveDate: string;
}

const RANK: Record<Priority, number> = { HIGH: 3, MEDIUM: 2, LOW: 1 };

/** Why an obligation of an effective pack does not apply to the context, or null when it does. */
export function whyNotApplicable(o: Obligation, ctx: SelectionContext): string | null {
  const a = o.appliesTo;
  if (!a.regions.includes(ctx.region)) return `applies in ${a.regions.join(', ')}, not ${ctx.region}`;
  if (!a.categories.includes('*') && !a.categories.includes(ctx.productCategory))
    return `applies to ${a.categories.join(', ')}, not ${ctx.productCategory}`;
  if (!a.lifecycleStages.includes(ctx.lifecycleStage))
    return `applies at ${a.lifecycleStages.join(', ')}, not ${ctx.lifecycleStage}`;
  const t = Date.parse(ctx.effectiveDate);
  if (a.from && Date.parse(a.from) > t) return `applies from ${a.from}`;
  if (a.until && Date.parse(a.until) <= t) return `applied until ${a.until}`;
  return null;
}

export interface SelectedObligation extends Obligation {
  celex: string;
  packVersion: string;
}

export interface Selection {
  /** The pack versions the obligations come from. */
  packs: { celex: string; version: string; title: string; source: PackEntry['source'] }[];
  obligations: SelectedObligation[];
}

export function packRef(e: PackEntry) {
  return { celex: e.pack.celex, version: e.pack.version, title: e.pack.title, source: e.source };
}

/** The applicable obligations at or above `minimum`, HIGH first, then by id. */
export function selectObligations(
  catalogue: readonly PackEntry[],
  ctx: SelectionContext,
  minimum: Priority,
): Selection {
  const packs = effectiveAt(catalogue, ctx.effectiveDate);
  const obligations = packs
    .flatMap((e) =>
      e.pack.obligations.map((o) => ({ ...o, celex: e.pack.celex, packVersion: e.pack.version })),
    )
    .filter((o) => RANK[o.priority] >= RANK[minimum] && whyNotApplicable(o, ctx) === null)
    .sort((a, b) => RANK[b.priority] - RANK[a.priority] || a.id.localeCompare(b.id));
  const used = packs.filter((e) => obligations.some((o) => o.celex === e.pack.celex));
  return { packs: used.map(packRef), obligations };
}
