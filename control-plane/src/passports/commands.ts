/** POST /passports/commands: one envelope for every passport state change, applied per transitions.ts. */
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '@dpp/shared';
import { recordAudit } from '../audit/index.js';
import { recordEvent } from '../events/index.js';
import { ApiError, parseOrThrow } from '../http/index.js';
import { type Db, isPostgres, isUniqueViolation, type PassportTable } from '../store/index.js';
import { sha256Hex } from './chain.js';
import { CommandPayloadSchema, type CommandEnvelope } from './command-envelope.js';
import { mergeSections } from './content.js';
import { DERIVED_SECTIONS, type PassportWriteContext } from './publish.js';
import {
  appendLog,
  assertNeverPublished,
  getPassportForUpdate,
  instantAfter,
  parseSections,
  productExists,
} from './queries.js';
import { allowedCommands, findTransition, type CommandName, type TransitionRow } from './transitions.js';

export interface CommandResult {
  commandId: string;
  type: string;
  passportId: string;
  idempotencyKey: string;
  fromState: string;
  state: string;
  changed: boolean;
  disclosureTier: string;
  appliedAt: string;
  warnings: string[];
}

/** The first result under an envelope key, or 409 when the key came with another body. */
async function replay(
  db: Db,
  tenantId: string,
  env: CommandEnvelope,
  hash: string,
): Promise<CommandResult | undefined> {
  const prior = await db
    .selectFrom('passport_commands')
    .select(['request_hash', 'result'])
    .where('tenant_id', '=', tenantId)
    .where('idempotency_key', '=', env.idempotencyKey)
    .executeTakeFirst();
  if (!prior) return undefined;
  if (prior.request_hash !== hash) {
    throw ApiError.plain(409, 'This idempotencyKey was already used for a different command', {
      details: { idempotencyKey: env.idempotencyKey, reason: 'idempotency_key_reused' },
    });
  }
  return JSON.parse(prior.result) as CommandResult;
}

async function loadPassport(trx: Db, tenantId: string, passportId: string): Promise<PassportTable> {
  const passport = await getPassportForUpdate(trx, tenantId, passportId);
  if (passport) return passport;
  if (await productExists(trx, tenantId, passportId)) {
    throw new ApiError(
      'PASSPORT_NOT_FOUND',
      'This product has no passport yet; generate one with POST /api/v2/dpp/generate',
      {
        details: { passportId, reason: 'not_generated' },
      },
    );
  }
  throw ApiError.notFound('Passport');
}

function ruleFor(
  command: CommandName,
  type: string,
  state: string,
): TransitionRow & { to: NonNullable<TransitionRow['to']> } {
  const row = findTransition(command, state);
  if (!row) {
    throw new ApiError('INVALID_TRANSITION', `${type} is not a transition from ${state}`, {
      details: { state, command: type, allowed: allowedCommands(state).map((c) => `PASSPORT.${c}`) },
    });
  }
  if (row.guard !== undefined || row.to === undefined) {
    throw new ApiError('GUARD_REJECTED', `${type} is refused in ${state}: ${row.guard ?? 'guarded'}`, {
      details: { state, command: type, reason: row.guard ?? null },
    });
  }
  return row as TransitionRow & { to: NonNullable<TransitionRow['to']> };
}

/** What a command writes besides the state: EDIT content, PUBLISH tier, REVOKE successor. */
async function effects(
  trx: Db,
  ctx: PassportWriteContext,
  command: CommandName,
  passport: PassportTable,
  payload: Record<string, unknown>,
) {
  const set: Partial<PassportTable> = {};
  if (command === 'EDIT') {
    const updates = payload.updates as Record<string, Record<string, unknown>>;
    for (const name of DERIVED_SECTIONS) {
      if (updates[name] !== undefined) {
        throw ApiError.validation(
          `payload.updates.${name}`,
          `payload.updates.${name}: the ${name} section is derived from the product`,
        );
      }
    }
    set.content = JSON.stringify(mergeSections(parseSections(passport.content), updates));
  }
  if (command === 'PUBLISH') set.disclosure_tier = payload.disclosureTier as string;
  if (command === 'REVOKE' && typeof payload.successorPassportId === 'string') {
    const successor = payload.successorPassportId;
    if (successor === passport.product_id || !(await productExists(trx, ctx.tenantId, successor))) {
      throw ApiError.validation(
        'payload.successorPassportId',
        'payload.successorPassportId: must be another passport of your tenant',
      );
    }
    set.successor_id = successor;
  }
  return set;
}

/**
 * Applies one command: the transition is looked up in the table (409 INVALID_TRANSITION when the
 * command has no row for the state, 403 GUARD_REJECTED when its row is guarded), then the command's payload
 * is checked (400 VALIDATION_ERROR), and the transition is made by one guarded
 * UPDATE on the expected state, with the command row, lifecycle log, events and audit in the same
 * transaction. The envelope's idempotencyKey replays the first result; another body under it is 409.
 */
export async function applyCommand(
  db: Db,
  ctx: PassportWriteContext & { principalType: string; principalId: string | null },
  env: CommandEnvelope,
  /** `unpublishedOnly`: refuse (409 PUBLISHED_PASSPORT_RETAINED) a passport ever published, decided in the transaction. */
  opts: { unpublishedOnly?: boolean } = {},
): Promise<{ replayed: boolean; result: CommandResult }> {
  if (env.tenantId !== ctx.tenantId) {
    throw ApiError.validation('tenantId', 'tenantId: must be the tenant of the credential');
  }
  const hash = sha256Hex(canonicalJson(env));
  const prior = await replay(db, ctx.tenantId, env, hash);
  if (prior) return { replayed: true, result: prior };
  const command = env.type.slice('PASSPORT.'.length) as CommandName;
  const passportId = env.payload.passportId as string;
  try {
    const result = await db.transaction().execute(async (trx) => {
      const passport = await loadPassport(trx, ctx.tenantId, passportId);
      if (opts.unpublishedOnly) assertNeverPublished(passport);
      const rule = ruleFor(command, env.type, passport.state);
      parseOrThrow(CommandPayloadSchema, env, 'body');
      const at = instantAfter(ctx.now(), passport.updated_at);
      const set = await effects(trx, ctx, command, passport, env.payload);
      const changed = rule.to !== passport.state;
      const res = await trx
        .updateTable('passports')
        .set({ ...set, state: rule.to, ...(changed ? { state_changed_at: at } : {}), updated_at: at })
        .where('product_id', '=', passportId)
        .where('state', '=', passport.state)
        .$if(opts.unpublishedOnly === true, (q) => q.where('first_published_at', 'is', null))
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) {
        throw new ApiError(
          'INVALID_TRANSITION',
          `The passport left ${passport.state} while ${env.type} ran; read it and retry`,
          {
            details: { state: passport.state, command: env.type, reason: 'concurrent_change' },
          },
        );
      }
      const result: CommandResult = {
        commandId: randomUUID(),
        type: env.type,
        passportId,
        idempotencyKey: env.idempotencyKey,
        fromState: passport.state,
        state: rule.to,
        changed,
        disclosureTier: set.disclosure_tier ?? passport.disclosure_tier,
        appliedAt: at,
        warnings: rule.warning ? [rule.warning] : [],
      };
      await trx
        .insertInto('passport_commands')
        .values({
          id: result.commandId,
          tenant_id: ctx.tenantId,
          product_id: passportId,
          type: env.type,
          idempotency_key: env.idempotencyKey,
          request_hash: hash,
          from_state: passport.state,
          to_state: rule.to,
          payload: JSON.stringify(env.payload),
          result: JSON.stringify(result),
          actor_id: env.actorId,
          correlation_id: env.correlationId,
          causation_id: env.causationId ?? null,
          requested_at: env.requestedAt,
          applied_at: at,
          principal_type: ctx.principalType,
          principal_id: ctx.principalId,
        })
        .execute();
      await record(trx, ctx, env, result);
      return result;
    });
    return { replayed: false, result };
  } catch (err) {
    // A twin with the same envelope key committed first: answer as its replay (or 409).
    if (isUniqueViolation(err) || (isPostgres(db) && (err as { code?: unknown }).code === '40001')) {
      const twin = await replay(db, ctx.tenantId, env, hash);
      if (twin) return { replayed: true, result: twin };
    }
    throw err;
  }
}

async function record(
  trx: Db,
  ctx: PassportWriteContext,
  env: CommandEnvelope,
  result: CommandResult,
): Promise<void> {
  const data = {
    commandId: result.commandId,
    type: env.type,
    passportId: result.passportId,
    from: result.fromState,
    to: result.state,
    actorId: env.actorId,
    causationId: env.causationId ?? null,
    ...(typeof env.payload.reason === 'string' ? { reason: env.payload.reason } : {}),
    ...(env.type === 'PASSPORT.PUBLISH' ? { disclosureTier: result.disclosureTier } : {}),
    ...(typeof env.payload.successorPassportId === 'string'
      ? { successorPassportId: env.payload.successorPassportId }
      : {}),
  };
  await appendLog(trx, {
    tenantId: ctx.tenantId,
    productId: result.passportId,
    type: 'COMMAND_APPLIED',
    data,
    correlationId: env.correlationId,
    at: result.appliedAt,
  });
  const eventType =
    env.type === 'PASSPORT.APPROVE'
      ? 'approval.completed'
      : env.type === 'PASSPORT.REVOKE'
        ? 'revocation.created'
        : undefined;
  if (eventType) {
    await recordEvent(trx, {
      tenantId: ctx.tenantId,
      type: eventType,
      resource: { type: 'passport', id: result.passportId },
      correlationId: env.correlationId,
      occurredAt: result.appliedAt,
      data,
    });
  }
  await recordAudit(trx, {
    tenantId: ctx.tenantId,
    actor: ctx.actor,
    action: `passport.command.${env.type.slice(9).toLowerCase()}`,
    resource: { type: 'passport', id: result.passportId },
    correlationId: env.correlationId,
    details: data,
    at: result.appliedAt,
  });
}
