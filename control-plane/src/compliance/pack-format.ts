/**
 * The format of a regulation pack, checked when a pack is loaded from the repository or published through the
 * API. A pack version is a rule set of one regulation (CELEX id) under a semantic version, effective from a
 * date; each obligation says where it comes from (article), how much it weighs (priority), when it applies
 * (region, categories, lifecycle stages, effective window) and its rule: a JSON Logic expression over the
 * evaluation subject (evaluate.ts) that answers true (pass) or false (fail), with the data paths it needs
 * (`requires`; any missing makes the outcome indeterminate rather than a fail).
 */
import jsonLogic from 'json-logic-js';
import { z } from 'zod';

export const PRIORITIES = ['HIGH', 'MEDIUM', 'LOW'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Where a product is in its life when an obligation is judged. */
export const LIFECYCLE_STAGES = [
  'design',
  'manufacturing',
  'placing_on_market',
  'in_use',
  'end_of_life',
] as const;
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number];

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const CELEX = /^3\d{4}[LRD]\d{4}$/;
const dateTime = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time' });
const dataPath = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$/, 'must be a dotted data path');

/** Operations a rule uses that are not JSON Logic's own (`method` and `log` are refused: no side effects). */
function unknownOperations(rule: unknown, found: string[] = []): string[] {
  if (Array.isArray(rule)) for (const r of rule) unknownOperations(r, found);
  else if (jsonLogic.is_logic(rule)) {
    const op = jsonLogic.get_operator(rule as Record<string, unknown>);
    if (!KNOWN_OPERATIONS.has(op)) found.push(op);
    unknownOperations((rule as Record<string, unknown>)[op], found);
  }
  return found;
}
const KNOWN_OPERATIONS = new Set([
  '==',
  '===',
  '!=',
  '!==',
  '>',
  '>=',
  '<',
  '<=',
  '!',
  '!!',
  '%',
  'in',
  'cat',
  'substr',
  '+',
  '*',
  '-',
  '/',
  'min',
  'max',
  'merge',
  'var',
  'missing',
  'missing_some',
  'if',
  '?:',
  'and',
  'or',
  'filter',
  'map',
  'reduce',
  'all',
  'none',
  'some',
]);

export const ObligationSchema = z.strictObject({
  id: z.string().regex(/^[A-Z]+_ART\d+[A-Z]?_[A-Z0-9_]+$/, 'must look like ESPR_ART<N>_<TOPIC>'),
  title: z.string().min(1).max(200),
  article: z.string().min(1).max(100).meta({ description: 'Where in the regulation, e.g. "Art. 9(1)"' }),
  priority: z.enum(PRIORITIES, { error: `must be one of ${PRIORITIES.join(', ')}` }),
  appliesTo: z.strictObject({
    regions: z.array(z.string().min(2).max(10)).min(1),
    /** Product categories, or ["*"] for every category. */
    categories: z.array(z.string().min(1).max(64)).min(1),
    lifecycleStages: z.array(z.enum(LIFECYCLE_STAGES)).min(1),
    from: dateTime.optional(),
    until: dateTime.optional(),
  }),
  requires: z.array(dataPath).max(50),
  rule: z
    .unknown()
    .refine(
      (r) => r !== undefined && (typeof r === 'boolean' || jsonLogic.is_logic(r)),
      'must be a JSON Logic rule',
    )
    .superRefine((r, ctx) => {
      const unknown = unknownOperations(r);
      if (unknown.length > 0)
        ctx.addIssue({ code: 'custom', message: `unknown operation ${unknown.join(', ')}` });
    }),
  /** What a fail means, for the finding. */
  failure: z.string().min(1).max(500),
});
export type Obligation = z.infer<typeof ObligationSchema>;

export const PackVersionSchema = z
  .strictObject({
    celex: z
      .string()
      .regex(CELEX, 'must be a CELEX id of a regulation, directive or decision, e.g. 32024R1781'),
    title: z.string().min(1).max(300),
    version: z.string().regex(SEMVER, 'must be a semantic version, e.g. 1.2.0'),
    effectiveFrom: dateTime,
    /** The sector projector that judges this pack, and whether it may (`refuse`: fail-closed, always 503). */
    sector: z.string().regex(/^[a-z][a-z0-9-]{1,30}$/),
    judgement: z.enum(['evaluate', 'refuse']),
    obligations: z
      .array(ObligationSchema)
      .min(1)
      .max(500)
      .refine((o) => new Set(o.map((x) => x.id)).size === o.length, 'must not repeat an obligation id'),
  })
  .meta({ id: 'RegulationPackVersionInput' });
export type PackVersion = z.infer<typeof PackVersionSchema>;

/** Compares semantic versions. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

/** The first problem of a pack as `path: message`, or null when it is well formed. */
export function packProblem(input: unknown): string | null {
  const r = PackVersionSchema.safeParse(input);
  if (r.success) return null;
  const issue = r.error.issues[0]!;
  const path = issue.path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i > 0 ? '.' : ''}${String(p)}`))
    .join('');
  return `${path || '(root)'}: ${issue.message}`;
}
