/**
 * The passport routes the spec names only by their errors (api-v2.md: DELETE /dpp/{productId}, DELETE and PATCH
 * of /api/v1/dpps/{dppId} and /api/v2/dpps/{dppId}). In a deployed environment they need an eIDAS actor identity
 * that cannot be bound yet, and refuse (routes-dpps.ts). In development and test they work: a passport never
 * published may be changed and archived; one that was ever published is retained for the product's life and
 * is neither changed nor archived here (409 PUBLISHED_PASSPORT_RETAINED); its lifecycle goes on through
 * /passports/commands.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '../http/index.js';
import type { Db, PassportTable } from '../store/index.js';
import { applyCommand } from './commands.js';
import type { PassportWriteContext } from './publish.js';
import { assertNeverPublished } from './queries.js';

export { assertNeverPublished };

/** A dppId is the passport's id, which is its product's id. */
export async function findPassport(db: Db, tenantId: string, dppId: string): Promise<PassportTable> {
  const passport = await db
    .selectFrom('passports')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('product_id', '=', dppId)
    .executeTakeFirst();
  if (!passport) throw new ApiError('PASSPORT_NOT_FOUND', 'Passport not found', { details: { dppId } });
  return passport;
}

/** What DELETE of a passport answers: it is archived (now, or it was already). */
export interface ArchiveOutcome {
  dppId: string;
  state: 'archived';
  archivedAt: string;
  /** False when it was archived already: a repeated DELETE changes nothing. */
  changed: boolean;
}

/**
 * Archives a passport that was never published, as PASSPORT.ARCHIVE does (command row, lifecycle log, events
 * and audit). Archiving an archived one again answers it as it is; a state ARCHIVE has no transition from
 * (submitted, approved) is 409 INVALID_TRANSITION, as the command would be.
 */
export async function archiveUnpublished(
  db: Db,
  ctx: PassportWriteContext & { principalType: string; principalId: string },
  dppId: string,
): Promise<ArchiveOutcome> {
  const passport = await findPassport(db, ctx.tenantId, dppId);
  assertNeverPublished(passport);
  if (passport.state === 'archived')
    return { dppId, state: 'archived', archivedAt: passport.state_changed_at, changed: false };
  const { result } = await applyCommand(
    db,
    ctx,
    {
      type: 'PASSPORT.ARCHIVE',
      tenantId: ctx.tenantId,
      idempotencyKey: randomUUID(),
      actorId: ctx.principalId,
      correlationId: randomUUID(),
      requestedAt: new Date(ctx.now()).toISOString(),
      payload: { passportId: dppId, reason: 'Archived through DELETE of the passport' },
    },
    { unpublishedOnly: true },
  );
  return { dppId, state: 'archived', archivedAt: result.appliedAt, changed: true };
}
