/**
 * A sector projector's evaluation: every obligation of the sector's pack version effective at the date, run
 * against the product as it is now, and recorded (never updated). It fails closed:
 *
 * - an obligation that does not apply to the product is `not_evaluated`, with why;
 * - one whose data is missing is `indeterminate`, naming the data; it never passes;
 * - one whose rule throws, or answers anything but true or false, is `error`, and the whole status is
 *   `Unknown` (no score): a rule that fails to run never counts as a pass;
 * - the status is `FullyCompliant` only when every applicable obligation passed, `Indeterminate` while any
 *   lacks data, else `PartiallyCompliant` or `NonCompliant`.
 *
 * The score is the share of applicable obligations passed, weighted by priority (HIGH 3, MEDIUM 2, LOW 1), 0 to
 * 100, and only when every one could be judged: an Indeterminate evaluation scores 0 (a product with no
 * compliance data among them), an Unknown one has none. An evaluation changes nothing but its own record: compliance is not publication.
 */
import jsonLogic from 'json-logic-js';
import { batchSerials } from '../carriers/index.js';
import type { Actor } from '../http/index.js';
import { parseSections, parseTiers, sectionTier } from '../passports/index.js';
import type { Db, ProductTable } from '../store/index.js';
import { uuidv7 } from '../store/index.js';
import type { LifecycleStage, Obligation, Priority } from './pack-format.js';
import { type PackEntry, effectiveAt } from './packs.js';
import { type SelectionContext, packRef, whyNotApplicable } from './select.js';

export const STATUSES = [
  'FullyCompliant',
  'PartiallyCompliant',
  'NonCompliant',
  'Indeterminate',
  'Unknown',
] as const;
export type ComplianceStatus = (typeof STATUSES)[number];
export type Outcome = 'pass' | 'fail' | 'indeterminate' | 'not_evaluated' | 'error';

export interface Finding {
  obligationId: string;
  celex: string;
  packVersion: string;
  article: string;
  title: string;
  priority: Priority;
  outcome: Outcome;
  /** Why, for every outcome but a pass. */
  reason: string | null;
  /** The data paths the rule needed that were missing (indeterminate). */
  missing: string[];
  /** The data the rule looked at, as it was. */
  observed: Record<string, unknown>;
}

export interface Evaluation {
  evaluationId: string;
  productId: string;
  sector: string;
  status: ComplianceStatus;
  score: number | null;
  context: SelectionContext;
  packs: ReturnType<typeof packRef>[];
  findings: Finding[];
  evaluatedAt: string;
}

const WEIGHT: Record<Priority, number> = { HIGH: 3, MEDIUM: 2, LOW: 1 };

/**
 * What the rules see of a product: its data, its carriers (serials allocated and their print outcomes, labels
 * sealed by the print loop), its passport (absent before one is generated) and its registrations.
 */
export async function subjectOf(db: Db, product: ProductTable): Promise<Record<string, unknown>> {
  const extensions = JSON.parse(product.extensions) as Record<string, unknown>;
  const subject: Record<string, unknown> = {
    product: {
      id: product.id,
      category: product.category,
      gtin: product.gtin,
      serialNumber: product.serial_number,
      granularity: product.granularity,
      stage: product.stage,
      voided: product.voided_at !== null,
      extensions,
    },
  };
  // The product's serials are its batches' ranges of the tenant's numbers (each read by the primary key).
  const carriers = await batchSerials(db)
    .select(['s.print_status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('b.tenant_id', '=', product.tenant_id)
    .where('b.product_id', '=', product.id)
    .groupBy('s.print_status')
    .execute();
  const sealed = await db
    .selectFrom('print_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('product_id', '=', product.id)
    .where('state', '=', 'SEALED')
    .executeTakeFirstOrThrow();
  const count = (status: string | null) => Number(carriers.find((c) => c.print_status === status)?.n ?? 0);
  subject.carriers = {
    allocated: carriers.reduce((s, c) => s + Number(c.n), 0),
    printed: count('printed'),
    failed: count('failed'),
    pending: count(null),
    sealedLabels: Number(sealed.n),
  };
  const passport = await db
    .selectFrom('passports')
    .selectAll()
    .where('product_id', '=', product.id)
    .executeTakeFirst();
  if (!passport) return subject;
  let publicSections = 0;
  if (passport.current_version_id && passport.disclosure_tier === 'public') {
    const version = await db
      .selectFrom('passport_versions')
      .select(['content', 'section_tiers'])
      .where('id', '=', passport.current_version_id)
      .executeTakeFirstOrThrow();
    const tiers = parseTiers(version.section_tiers);
    publicSections = Object.keys(parseSections(version.content)).filter(
      (n) => sectionTier(tiers, n) === 'public',
    ).length;
  }
  const identifier = await db
    .selectFrom('dpp_identifiers')
    .select('version_id')
    .where('product_id', '=', product.id)
    .executeTakeFirst();
  const registered = passport.current_version_id
    ? await db
        .selectFrom('eu_registry_registrations')
        .select('id')
        .where('product_id', '=', product.id)
        .where('version_id', '=', passport.current_version_id)
        .executeTakeFirst()
    : undefined;
  subject.passport = {
    state: passport.state,
    published: passport.current_version_id !== null && !['revoked', 'archived'].includes(passport.state),
    version: passport.current_version,
    disclosure: passport.disclosure_tier,
    publicSections,
    digitalLinkRegistered: identifier !== undefined && identifier.version_id === passport.current_version_id,
    euRegistryRegistered: registered !== undefined,
  };
  return subject;
}

/** Runs one obligation against the subject. */
export function judge(
  o: Obligation,
  subject: Record<string, unknown>,
): Pick<Finding, 'outcome' | 'reason' | 'missing' | 'observed'> {
  const observed = Object.fromEntries(
    o.requires.map((p) => [p, (jsonLogic.apply({ var: p }, subject) as unknown) ?? null]),
  );
  let missing: string[];
  let answer: unknown;
  try {
    missing = jsonLogic.apply({ missing: o.requires }, subject) as string[];
    if (missing.length > 0)
      return { outcome: 'indeterminate', reason: `missing data: ${missing.join(', ')}`, missing, observed };
    answer = jsonLogic.apply(o.rule as Parameters<typeof jsonLogic.apply>[0], subject);
  } catch (err) {
    return {
      outcome: 'error',
      reason: `the rule failed to run: ${(err as Error).message}`,
      missing: [],
      observed,
    };
  }
  if (answer === true) return { outcome: 'pass', reason: null, missing: [], observed };
  if (answer === false) return { outcome: 'fail', reason: o.failure, missing: [], observed };
  return {
    outcome: 'error',
    reason: `the rule answered ${JSON.stringify(answer)}, not true or false`,
    missing: [],
    observed,
  };
}

/** The status and score of a set of findings (see the module comment). */
export function verdict(findings: readonly Finding[]): { status: ComplianceStatus; score: number | null } {
  const applicable = findings.filter((f) => f.outcome !== 'not_evaluated');
  if (applicable.some((f) => f.outcome === 'error')) return { status: 'Unknown', score: null };
  const total = applicable.reduce((s, f) => s + WEIGHT[f.priority], 0);
  const passed = applicable.filter((f) => f.outcome === 'pass').reduce((s, f) => s + WEIGHT[f.priority], 0);
  if (applicable.length === 0 || applicable.some((f) => f.outcome === 'indeterminate'))
    return { status: 'Indeterminate', score: 0 };
  const score = Math.round((100 * passed) / total);
  if (passed === total) return { status: 'FullyCompliant', score };
  return { status: passed === 0 ? 'NonCompliant' : 'PartiallyCompliant', score };
}

export interface EvaluateInput {
  sector: string;
  product: ProductTable;
  catalogue: readonly PackEntry[];
  lifecycleStage: LifecycleStage;
  effectiveDate: string;
}

/** Evaluates without recording (the pure part, given the subject). */
export function evaluateSubject(
  input: EvaluateInput,
  subject: Record<string, unknown>,
): Omit<Evaluation, 'evaluationId' | 'evaluatedAt'> {
  const context: SelectionContext = {
    region: 'EU',
    productCategory: input.product.category,
    lifecycleStage: input.lifecycleStage,
    effectiveDate: input.effectiveDate,
  };
  const packs = effectiveAt(input.catalogue, input.effectiveDate).filter(
    (e) => e.pack.sector === input.sector,
  );
  const findings: Finding[] = packs.flatMap((e) =>
    e.pack.obligations.map((o) => {
      const base = {
        obligationId: o.id,
        celex: e.pack.celex,
        packVersion: e.pack.version,
        article: o.article,
        title: o.title,
        priority: o.priority,
      };
      const why = whyNotApplicable(o, context);
      if (why !== null)
        return { ...base, outcome: 'not_evaluated' as const, reason: why, missing: [], observed: {} };
      return { ...base, ...judge(o, subject) };
    }),
  );
  return {
    productId: input.product.id,
    sector: input.sector,
    context,
    packs: packs.map(packRef),
    findings,
    ...verdict(findings),
  };
}

/**
 * Runs and records an evaluation. Gathering the product's data may fail (the store): the evaluation is then
 * recorded as `Unknown`, its findings `error` with why, and never as a pass.
 */
export async function runEvaluation(
  db: Db,
  ctx: { tenantId: string; actor: Actor; now: () => number },
  input: EvaluateInput,
): Promise<Evaluation> {
  let result: Omit<Evaluation, 'evaluationId' | 'evaluatedAt'>;
  try {
    result = evaluateSubject(input, await subjectOf(db, input.product));
  } catch (err) {
    const failed = evaluateSubject(input, {});
    result = {
      ...failed,
      status: 'Unknown',
      score: null,
      findings: failed.findings.map((f) =>
        f.outcome === 'not_evaluated'
          ? f
          : {
              ...f,
              outcome: 'error',
              reason: `the product's data could not be read: ${(err as Error).message}`,
              missing: [],
            },
      ),
    };
  }
  const evaluation: Evaluation = {
    evaluationId: uuidv7(),
    ...result,
    evaluatedAt: new Date(ctx.now()).toISOString(),
  };
  await db
    .insertInto('compliance_evaluations')
    .values({
      id: evaluation.evaluationId,
      tenant_id: ctx.tenantId,
      product_id: input.product.id,
      sector: input.sector,
      status: evaluation.status,
      score: evaluation.score,
      result: JSON.stringify(evaluation),
      evaluated_at: evaluation.evaluatedAt,
      actor_type: ctx.actor.type,
      actor_id: ctx.actor.id,
    })
    .execute();
  return evaluation;
}

/** Recorded evaluations of a product for a sector, newest first. */
export async function evaluationsOf(
  db: Db,
  tenantId: string,
  productId: string,
  sector?: string,
): Promise<Evaluation[]> {
  let q = db
    .selectFrom('compliance_evaluations')
    .select('result')
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', productId)
    .orderBy('evaluated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(100);
  if (sector) q = q.where('sector', '=', sector);
  return (await q.execute()).map((r) => JSON.parse(r.result) as Evaluation);
}
