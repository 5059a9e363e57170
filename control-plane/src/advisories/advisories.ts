/**
 * Security advisories a workspace publishes about its products (api-v2.md, "Security advisory feed"). An
 * advisory is published whole and at once; an update makes a new version and a withdrawal a last one, each
 * with a line in the revision history that CSAF tools read (csaf.ts). Versions are never edited: every one
 * stays readable in `security_advisory_revisions`, written in the same transaction as the advisory.
 */
import { recordAudit } from '../audit/index.js';
import { slugOf } from '../tenants/index.js';
import { type Actor, ApiError, decodeCursor, encodeCursor, type Page } from '../http/index.js';
import {
  type Db,
  type SecurityAdvisoryTable,
  isPostgres,
  isUniqueViolation,
  uuidv7,
} from '../store/index.js';

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** CSAF 2.0 remediation categories (3.2.3.12.1). */
export const REMEDIATION_CATEGORIES = [
  'vendor_fix',
  'mitigation',
  'workaround',
  'none_available',
  'no_fix_planned',
] as const;
export type RemediationCategory = (typeof REMEDIATION_CATEGORIES)[number];

export interface AdvisoryProduct {
  name: string;
  version?: string | undefined;
  gtin?: string | undefined;
}

/** What the publisher writes; the rest of an advisory (ids, versions, dates) is the service's. */
export interface AdvisoryContent {
  title: string;
  summary: string;
  severity: Severity;
  cves: string[];
  affectedProducts: AdvisoryProduct[];
  fixedProducts: AdvisoryProduct[];
  remediation: { category: RemediationCategory; details: string; url?: string | undefined };
  references: { url: string; summary: string }[];
}

export interface AdvisoryRevision {
  version: number;
  date: string;
  summary: string;
}

export interface Advisory extends AdvisoryContent {
  id: string;
  trackingId: string;
  state: 'published' | 'withdrawn';
  version: number;
  initialReleaseDate: string;
  currentReleaseDate: string;
  withdrawnAt: string | null;
  withdrawalReason: string | null;
  revisions: AdvisoryRevision[];
}

export interface AdvisoryWriteContext {
  tenantId: string;
  actor: Actor;
  correlationId: string | null;
  now: () => number;
}

/** An advisory row with the revisions up to its version, as read together. */
export function advisoryOf(row: SecurityAdvisoryTable, revisions: AdvisoryRevision[]): Advisory {
  return {
    id: row.id,
    trackingId: row.tracking_id,
    state: row.state as Advisory['state'],
    version: row.version,
    ...(JSON.parse(row.content) as AdvisoryContent),
    initialReleaseDate: row.initial_release_date,
    currentReleaseDate: row.current_release_date,
    withdrawnAt: row.withdrawn_at,
    withdrawalReason: row.withdrawal_reason,
    revisions: revisions.filter((r) => r.version <= row.version).sort((a, b) => a.version - b.version),
  };
}

/**
 * The revisions of each advisory, read after the advisories themselves: a revision is written in the same
 * transaction as its advisory row, so every version up to the one read is there (later ones are dropped).
 */
async function withRevisions(db: Db, rows: SecurityAdvisoryTable[]): Promise<Advisory[]> {
  if (rows.length === 0) return [];
  const revs = await db
    .selectFrom('security_advisory_revisions')
    .select(['advisory_id', 'version', 'date', 'summary'])
    .where(
      'advisory_id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  return rows.map((row) =>
    advisoryOf(
      row,
      revs.filter((r) => r.advisory_id === row.id),
    ),
  );
}

const notFound = (id: string) =>
  new ApiError('ADVISORY_NOT_FOUND', 'No security advisory with this id', { details: { advisoryId: id } });

export async function getAdvisory(db: Db, tenantId: string, id: string): Promise<Advisory> {
  const row = await db
    .selectFrom('security_advisories')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(id);
  return (await withRevisions(db, [row]))[0]!;
}

/** One advisory by its tracking id, or null (what the public document route serves). */
export async function advisoryByTrackingId(
  db: Db,
  tenantId: string,
  trackingId: string,
): Promise<Advisory | null> {
  const row = await db
    .selectFrom('security_advisories')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('tracking_id', '=', trackingId)
    .executeTakeFirst();
  return row ? (await withRevisions(db, [row]))[0]! : null;
}

/** The workspace's advisories, newest first, cursor-paged. */
export async function listAdvisories(
  db: Db,
  tenantId: string,
  q: { limit?: number | undefined; cursor?: string | undefined },
): Promise<Page<Advisory>> {
  const limit = q.limit ?? 25;
  let query = db
    .selectFrom('security_advisories')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('seq', 'desc')
    .limit(limit + 1);
  if (q.cursor) {
    const c = decodeCursor(q.cursor, 'seq');
    query = query.where('seq', '<', Number(c.value));
  }
  const rows = await query.execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: await withRevisions(db, page),
    hasMore: rows.length > limit,
    nextCursor: rows.length > limit && last ? encodeCursor('seq', last.seq, last.id) : null,
  };
}

/** Every advisory of a workspace, newest first, with its revisions: what its public feed serves. */
export async function allAdvisories(db: Db, tenantId: string): Promise<Advisory[]> {
  const rows = await db
    .selectFrom('security_advisories')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('seq', 'desc')
    .execute();
  return withRevisions(db, rows);
}

/** A date strictly after `previous`, so versions are ordered whatever the clock did. */
function after(now: number, previous: string): string {
  const p = Date.parse(previous);
  return new Date(Math.max(now, p + 1)).toISOString();
}

/**
 * Publishes a new advisory as version 1. Its tracking id, `<SLUG>-SA-<year>-<NNNN>`, is made from the
 * workspace's slug at that moment and never changes (CSAF tools key on it).
 */
export async function publishAdvisory(
  db: Db,
  ctx: AdvisoryWriteContext,
  content: AdvisoryContent,
): Promise<Advisory> {
  for (let tries = 0; ; tries++) {
    try {
      return await db.transaction().execute(async (trx) => {
        const slug = await slugOf(trx, ctx.tenantId);
        const { last } = await trx
          .selectFrom('security_advisories')
          .select((eb) => eb.fn.max('seq').as('last'))
          .where('tenant_id', '=', ctx.tenantId)
          .executeTakeFirstOrThrow();
        const seq = Number(last ?? 0) + 1;
        const at = new Date(ctx.now()).toISOString();
        const row: SecurityAdvisoryTable = {
          id: uuidv7(),
          tenant_id: ctx.tenantId,
          seq,
          tracking_id: `${slug.toUpperCase()}-SA-${at.slice(0, 4)}-${String(seq).padStart(4, '0')}`,
          state: 'published',
          version: 1,
          content: JSON.stringify(content),
          initial_release_date: at,
          current_release_date: at,
          withdrawn_at: null,
          withdrawal_reason: null,
        };
        await trx.insertInto('security_advisories').values(row).execute();
        const revision = { version: 1, date: at, summary: 'Initial publication' };
        await insertRevision(trx, ctx, row.id, revision, content);
        await audit(trx, ctx, 'advisory.published', row, { trackingId: row.tracking_id });
        return advisoryOf(row, [revision]);
      });
    } catch (err) {
      // Two publications at once took the same number: the loser takes the next one.
      if (!isUniqueViolation(err) || tries >= 4) throw err;
    }
  }
}

/**
 * Publishes a new version with `changes` applied and `revisionSummary` in the history. A withdrawn advisory
 * is final (409 INVALID_TRANSITION). Changes that leave the content as it is make no version.
 */
export async function updateAdvisory(
  db: Db,
  ctx: AdvisoryWriteContext,
  id: string,
  changes: Partial<AdvisoryContent>,
  revisionSummary: string,
): Promise<{ advisory: Advisory; changed: boolean }> {
  return db.transaction().execute(async (trx) => {
    const row = await lockedAdvisory(trx, ctx.tenantId, id);
    if (row.state === 'withdrawn') {
      throw new ApiError('INVALID_TRANSITION', 'A withdrawn advisory is final: publish a new one instead', {
        details: { from: 'withdrawn', to: 'published', allowed: [] },
      });
    }
    const current = JSON.parse(row.content) as AdvisoryContent;
    const next: AdvisoryContent = { ...current, ...changes };
    if (JSON.stringify(next) === JSON.stringify(current)) {
      return { advisory: (await withRevisions(trx, [row]))[0]!, changed: false };
    }
    const updated = await bump(
      trx,
      ctx,
      row,
      { content: JSON.stringify(next) },
      revisionSummary,
      next,
      after(ctx.now(), row.current_release_date),
    );
    await audit(trx, ctx, 'advisory.updated', updated, {
      version: updated.version,
      fields: Object.keys(changes).filter(
        (k) =>
          JSON.stringify(current[k as keyof AdvisoryContent]) !==
          JSON.stringify(changes[k as keyof AdvisoryContent]),
      ),
    });
    return { advisory: (await withRevisions(trx, [updated]))[0]!, changed: true };
  });
}

/**
 * Withdraws an advisory: a last version whose history says why. It stays in the feed, so tools that read it
 * learn it was withdrawn instead of seeing it vanish. Withdrawing it again changes nothing.
 */
export async function withdrawAdvisory(
  db: Db,
  ctx: AdvisoryWriteContext,
  id: string,
  reason: string,
): Promise<{ advisory: Advisory; changed: boolean }> {
  return db.transaction().execute(async (trx) => {
    const row = await lockedAdvisory(trx, ctx.tenantId, id);
    if (row.state === 'withdrawn') return { advisory: (await withRevisions(trx, [row]))[0]!, changed: false };
    const at = after(ctx.now(), row.current_release_date);
    const updated = await bump(
      trx,
      ctx,
      row,
      { state: 'withdrawn', withdrawn_at: at, withdrawal_reason: reason },
      `Withdrawn: ${reason}`,
      JSON.parse(row.content) as AdvisoryContent,
      at,
    );
    await audit(trx, ctx, 'advisory.withdrawn', updated, { version: updated.version, reason });
    return { advisory: (await withRevisions(trx, [updated]))[0]!, changed: true };
  });
}

async function lockedAdvisory(db: Db, tenantId: string, id: string): Promise<SecurityAdvisoryTable> {
  const q = db
    .selectFrom('security_advisories')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id);
  // Locked on PostgreSQL, so two changes at once are versions one after the other; a SQLite write
  // transaction already runs alone.
  const row = await (isPostgres(db) ? q.forUpdate() : q).executeTakeFirst();
  if (!row) throw notFound(id);
  return row;
}

/** The next version of `row`, released `at`, with `set` applied, and its revision. */
async function bump(
  db: Db,
  ctx: AdvisoryWriteContext,
  row: SecurityAdvisoryTable,
  set: Partial<SecurityAdvisoryTable>,
  summary: string,
  content: AdvisoryContent,
  at: string,
): Promise<SecurityAdvisoryTable> {
  const updated: SecurityAdvisoryTable = {
    ...row,
    ...set,
    version: row.version + 1,
    current_release_date: at,
  };
  await db
    .updateTable('security_advisories')
    .set({ ...set, version: updated.version, current_release_date: at })
    .where('id', '=', row.id)
    .execute();
  await insertRevision(db, ctx, row.id, { version: updated.version, date: at, summary }, content);
  return updated;
}

async function insertRevision(
  db: Db,
  ctx: AdvisoryWriteContext,
  advisoryId: string,
  r: AdvisoryRevision,
  content: AdvisoryContent,
): Promise<void> {
  await db
    .insertInto('security_advisory_revisions')
    .values({
      advisory_id: advisoryId,
      version: r.version,
      date: r.date,
      summary: r.summary,
      content: JSON.stringify(content),
      actor_type: ctx.actor.type,
      actor_id: ctx.actor.id,
    })
    .execute();
}

function audit(
  db: Db,
  ctx: AdvisoryWriteContext,
  action: string,
  row: SecurityAdvisoryTable,
  details: Record<string, unknown>,
): Promise<void> {
  return recordAudit(db, {
    tenantId: ctx.tenantId,
    actor: ctx.actor,
    action,
    resource: { type: 'security_advisory', id: row.id },
    correlationId: ctx.correlationId,
    details: { trackingId: row.tracking_id, ...details },
    at: row.current_release_date,
  });
}
