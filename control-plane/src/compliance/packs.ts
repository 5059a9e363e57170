/**
 * The regulation packs a workspace sees: the versions the repository ships (packs/*.json, loaded and checked at
 * start), and the versions the workspace published itself on top of them. Nothing is edited in place: a
 * version's state follows from the dates alone. Of one pack, the version effective at a moment is the one with
 * the latest `effectiveFrom` at or before it (the higher version on a tie); earlier ones are superseded then,
 * and a version whose `effectiveFrom` is still ahead is a draft. Every version stays readable.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordAudit } from '../audit/index.js';
import { ConfigError } from '../config/index.js';
import { type Actor, ApiError } from '../http/index.js';
import { type Db, isUniqueViolation, uuidv7 } from '../store/index.js';
import { type PackVersion, PackVersionSchema, compareVersions, packProblem } from './pack-format.js';

export const SHIPPED_PACKS_DIR = fileURLToPath(new URL('./packs/', import.meta.url));

export type PackState = 'draft' | 'effective' | 'superseded';

export interface PackEntry {
  pack: PackVersion;
  /** `shipped` with the repository, or `workspace` when the workspace published it. */
  source: 'shipped' | 'workspace';
  publishedAt: string | null;
}

/** A pack file that cannot be loaded: start-up stops with one line naming the file and the field. */
export class PackError extends ConfigError {
  constructor(file: string, problem: string) {
    super(`compliance pack ${file}`, problem);
    this.name = 'PackError';
  }
}

/** Reads and checks every `*.json` pack in `dir`; the first malformed one throws a PackError. */
export function loadPackFiles(dir: string): PackVersion[] {
  const out: PackVersion[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const where = path.join(path.basename(dir), file);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    } catch (err) {
      throw new PackError(where, `not JSON (${(err as Error).message})`);
    }
    const problem = packProblem(raw);
    if (problem) throw new PackError(where, problem);
    const pack = PackVersionSchema.parse(raw);
    if (out.some((p) => p.celex === pack.celex && p.version === pack.version))
      throw new PackError(where, `version: ${pack.celex} ${pack.version} is shipped twice`);
    out.push(pack);
  }
  return out;
}

let shipped: PackVersion[] | null = null;

/** The packs the repository ships, loaded once (call at start so a malformed pack stops it). */
export function shippedPacks(): PackVersion[] {
  shipped ??= loadPackFiles(SHIPPED_PACKS_DIR);
  return shipped;
}

/** Every pack version a workspace sees: shipped ones and its own. */
export async function packCatalogue(db: Db, tenantId: string): Promise<PackEntry[]> {
  const own = await db
    .selectFrom('compliance_pack_versions')
    .select(['content', 'published_at'])
    .where('tenant_id', '=', tenantId)
    .execute();
  return [
    ...shippedPacks().map((pack) => ({ pack, source: 'shipped' as const, publishedAt: null })),
    ...own.map((r) => ({
      pack: JSON.parse(r.content) as PackVersion,
      source: 'workspace' as const,
      publishedAt: r.published_at,
    })),
  ];
}

/** Newest first: by effectiveFrom, then by version. */
function newestFirst(a: PackEntry, b: PackEntry): number {
  return (
    b.pack.effectiveFrom.localeCompare(a.pack.effectiveFrom) ||
    compareVersions(b.pack.version, a.pack.version)
  );
}

/** The version of each pack effective at `at` (ISO 8601): one per CELEX id. */
export function effectiveAt(catalogue: readonly PackEntry[], at: string): PackEntry[] {
  const t = Date.parse(at);
  const byCelex = new Map<string, PackEntry>();
  for (const e of [...catalogue].sort(newestFirst)) {
    if (Date.parse(e.pack.effectiveFrom) > t || byCelex.has(e.pack.celex)) continue;
    byCelex.set(e.pack.celex, e);
  }
  return [...byCelex.values()];
}

/** A version's state now. */
export function stateOf(catalogue: readonly PackEntry[], e: PackEntry, now: number): PackState {
  if (Date.parse(e.pack.effectiveFrom) > now) return 'draft';
  const current = effectiveAt(catalogue, new Date(now).toISOString()).find(
    (c) => c.pack.celex === e.pack.celex,
  );
  return current?.pack.version === e.pack.version && current.source === e.source ? 'effective' : 'superseded';
}

/** The versions of one pack, newest first. */
export function versionsOf(catalogue: readonly PackEntry[], celex: string): PackEntry[] {
  return catalogue.filter((e) => e.pack.celex === celex).sort(newestFirst);
}

/**
 * Publishes a new version of a pack for the workspace. It must be a pack the repository ships (a new regulation
 * comes with the code that knows its sector), with a version higher than every one the workspace sees, and
 * take effect no earlier than the effective one (409 INVALID_TRANSITION otherwise); `effectiveFrom` defaults to
 * now. Publishing the same version again is 409 too: versions are never replaced.
 */
export async function publishPackVersion(
  db: Db,
  ctx: { tenantId: string; actor: Actor; correlationId: string | null; now: () => number },
  input: PackVersion,
): Promise<PackEntry> {
  const catalogue = await packCatalogue(db, ctx.tenantId);
  const versions = versionsOf(catalogue, input.celex);
  if (versions.length === 0) {
    throw new ApiError(
      'VALIDATION_ERROR',
      `celex: ${input.celex} is not a regulation this service has a pack for`,
      {
        details: { field: 'celex', known: [...new Set(catalogue.map((e) => e.pack.celex))] },
      },
    );
  }
  const highest = [...versions].sort((a, b) => compareVersions(b.pack.version, a.pack.version))[0]!;
  if (compareVersions(input.version, highest.pack.version) <= 0) {
    throw new ApiError('INVALID_TRANSITION', `version: must be higher than ${highest.pack.version}`, {
      details: { from: highest.pack.version, to: input.version, reason: 'versions only go up' },
    });
  }
  const now = new Date(ctx.now()).toISOString();
  const current = effectiveAt(catalogue, now).find((e) => e.pack.celex === input.celex);
  if (current && Date.parse(input.effectiveFrom) < Date.parse(current.pack.effectiveFrom)) {
    throw new ApiError(
      'INVALID_TRANSITION',
      'effectiveFrom: a new version cannot take effect before the effective one',
      {
        details: { from: current.pack.version, to: input.version, effectiveFrom: current.pack.effectiveFrom },
      },
    );
  }
  if (current?.pack.sector !== undefined && current.pack.sector !== input.sector) {
    throw ApiError.validation('sector', `sector: must stay ${current.pack.sector}`);
  }
  try {
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('compliance_pack_versions')
        .values({
          id: uuidv7(),
          tenant_id: ctx.tenantId,
          celex: input.celex,
          version: input.version,
          effective_from: input.effectiveFrom,
          content: JSON.stringify(input),
          published_at: now,
          actor_type: ctx.actor.type,
          actor_id: ctx.actor.id,
        })
        .execute();
      await recordAudit(trx, {
        tenantId: ctx.tenantId,
        actor: ctx.actor,
        action: 'compliance.pack_published',
        resource: { type: 'regulation_pack', id: `${input.celex}@${input.version}` },
        correlationId: ctx.correlationId,
        details: { celex: input.celex, version: input.version, effectiveFrom: input.effectiveFrom },
        at: now,
      });
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    throw new ApiError(
      'INVALID_TRANSITION',
      `version: ${input.version} of ${input.celex} is published already`,
      {
        details: { from: input.version, to: input.version, reason: 'versions are never replaced' },
      },
    );
  }
  return { pack: input, source: 'workspace', publishedAt: now };
}
