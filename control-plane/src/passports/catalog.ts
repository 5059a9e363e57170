/** GET /passports/commands: the command catalog, generated from the table the service enforces. */
import { COMMAND_PAYLOADS, ENVELOPE_FIELDS } from './command-envelope.js';
import { PASSPORT_STATES, publicStatus } from './model.js';
import { COMMAND_NAMES, TRANSITIONS } from './transitions.js';
import { publicAnswer } from './views.js';

const EMITS: Readonly<Record<string, string>> = {
  APPROVE: 'approval.completed',
  REVOKE: 'revocation.created',
};

export function commandCatalog() {
  return {
    wireFormat: 'PASSPORT.<NAME>',
    states: PASSPORT_STATES,
    initialState: 'draft',
    envelope: {
      fields: ENVELOPE_FIELDS,
      required: ENVELOPE_FIELDS.filter((f) => f !== 'causationId'),
      idempotency: 'idempotencyKey replays the first result; the same key with another body is 409',
    },
    errors: {
      noTransition: { status: 409, code: 'INVALID_TRANSITION' },
      guarded: { status: 403, code: 'GUARD_REJECTED' },
      misplacedField: { status: 400, code: 'VALIDATION_ERROR' },
    },
    commands: COMMAND_NAMES.map((name) => {
      const rows = TRANSITIONS.filter((t) => t.command === name);
      return {
        type: `PASSPORT.${name}`,
        payload: Object.entries(COMMAND_PAYLOADS[name]).map(([field, f]) => ({
          name: field,
          required: f.required,
          description: f.description,
        })),
        transitions: rows
          .filter((t) => t.to !== undefined)
          .map((t) => ({
            from: t.from,
            to: t.to!,
            ...(t.warning ? { warning: t.warning } : {}),
            source: t.spec ? 'api-v2.md' : 'service',
          })),
        guarded: rows
          .filter((t) => t.guard !== undefined)
          .map((t) => ({
            from: t.from,
            status: 403,
            code: 'GUARD_REJECTED',
            reason: t.guard!,
            source: t.spec ? 'api-v2.md' : 'service',
          })),
        ...(EMITS[name] ? { emits: EMITS[name] } : {}),
      };
    }),
    // What GET /api/v2/public/passport/{uid} answers in each state, for a passport with a published
    // version, published to the public, whose product is not voided.
    publicRoute: PASSPORT_STATES.map((state) => ({
      state,
      ...publicAnswer(
        publicStatus({
          currentVersion: 1,
          state,
          disclosureTier: 'public',
          productVoided: false,
          granularity: 'item',
        }),
      ),
    })),
  };
}
