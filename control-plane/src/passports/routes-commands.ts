import { actorOf, route, type RouteDef } from '../http/index.js';
import { CommandResultSchema, LooseObject } from './api-schemas.js';
import { commandCatalog } from './catalog.js';
import { CommandEnvelopeSchema } from './command-envelope.js';
import { applyCommand } from './commands.js';
import type { PassportRouteDeps } from './routes.js';

export function commandRoutes(deps: PassportRouteDeps): RouteDef[] {
  const { db } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/passports/commands',
      operationId: 'sendPassportCommand',
      summary: 'Send a passport lifecycle command (PASSPORT.SUBMIT, APPROVE, PUBLISH, ...)',
      description:
        'Scope passports:command. Idempotency-Key header required, and the envelope idempotencyKey replays the first result ' +
        '(another body under it is a plain 409). Every envelope field is validated; a field at the wrong level (disclosureTier ' +
        'beside payload, tenantId inside it) is 400 VALIDATION_ERROR naming it. A command with no transition from the current ' +
        'state is 409 INVALID_TRANSITION (details.allowed); a guarded one (EDIT on a published passport) is 403 GUARD_REJECTED. ' +
        'Warning kept from the spec: PASSPORT.SUBMIT on a published passport moves it to submitted and the public route goes ' +
        'from 200 to 404. The table is GET /api/v2/passports/commands.',
      tags: ['Passports'],
      auth: { scopes: ['passports:command'] },
      idempotency: 'required',
      request: { body: CommandEnvelopeSchema },
      responses: {
        200: {
          description: 'Applied (or replayed for the same idempotencyKey)',
          schema: CommandResultSchema,
        },
      },
      errors: ['GUARD_REJECTED', 'INVALID_TRANSITION', 'PASSPORT_NOT_FOUND'],
      handler: async ({ principal, body, correlationId }) => {
        const { replayed, result } = await applyCommand(
          db,
          {
            tenantId: principal.tenant.id,
            actor: actorOf(principal),
            correlationId,
            now: deps.now,
            principalType: principal.type,
            principalId: principal.id,
          },
          body,
        );
        return {
          status: 200,
          body: result,
          ...(replayed ? { headers: { 'Idempotent-Replayed': 'true' } } : {}),
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/passports/commands',
      operationId: 'listPassportCommands',
      summary: 'The command catalog, generated from the transition table the service enforces',
      description:
        'Scope dpp:read. States, the envelope, and per command its payload fields, transitions (from, to, warnings), guarded ' +
        'states (403 GUARD_REJECTED) and emitted events; any other state is 409 INVALID_TRANSITION. publicRoute says what the ' +
        'public passport route answers in each state.',
      tags: ['Passports'],
      auth: { scopes: ['dpp:read'] },
      responses: { 200: { description: 'The catalog', schema: LooseObject } },
      handler: async () => ({ status: 200, body: commandCatalog() }),
    }),
  ];
}
