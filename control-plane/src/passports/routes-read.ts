import { ApiError, route, type RouteDef } from '../http/index.js';
import { AsOfQuery, IdParam, LooseObject, ProofQuery, SectionParam, VersionSchema } from './api-schemas.js';
import { lifecycleLog, passportAsOf, passportHistory, requirePassport, sectionProofOf } from './history.js';
import type { PassportRouteDeps } from './routes.js';
import { passportSummary } from './views.js';
import { z } from 'zod';

const HistorySchema = z
  .object({
    passportUid: z.uuid(),
    currentVersion: z.number().int(),
    algorithms: z.object({ hash: z.string(), merkle: z.string() }),
    versions: z.array(VersionSchema),
  })
  .meta({ id: 'PassportHistory' });

export function readRoutes(deps: PassportRouteDeps): RouteDef[] {
  const { db } = deps;
  const read = { scopes: ['dpp:read'] } as const;
  return [
    route({
      method: 'get',
      path: '/api/v2/passports/{id}',
      operationId: 'getPassport',
      summary: 'A passport: command state, disclosure tier, current version, registration, readyToPrint',
      description:
        'Scope dpp:read. publicRoute says what GET /api/v2/public/passport/{uid} answers now. 404 PASSPORT_NOT_FOUND before generation.',
      tags: ['Passports'],
      auth: { scopes: [...read.scopes] },
      request: { params: IdParam },
      responses: { 200: { description: 'The passport', schema: LooseObject } },
      errors: ['PASSPORT_NOT_FOUND'],
      handler: async ({ principal, params }) => {
        const passport = await requirePassport(db, principal.tenant.id, params.id);
        const product = await db
          .selectFrom('products')
          .select(['voided_at', 'granularity'])
          .where('id', '=', params.id)
          .executeTakeFirstOrThrow();
        const validations = await db
          .selectFrom('passport_validations')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('product_id', '=', params.id)
          .executeTakeFirstOrThrow();
        const identifier = await db
          .selectFrom('dpp_identifiers')
          .select('digital_link')
          .where('product_id', '=', params.id)
          .executeTakeFirst();
        return {
          status: 200,
          body: passportSummary(passport, product, {
            validations: Number(validations.n),
            digitalLink: identifier?.digital_link ?? null,
          }),
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/passports/{id}/history',
      operationId: 'getPassportHistory',
      summary: 'The immutable version chain, oldest first',
      description:
        'Scope dpp:read. Each version: version, previous_version_id, current, and what re-verifies the chain: ' +
        'contentHash = SHA-256(RFC 8785 content), merkleRoot (RFC 6962 over the sections), hash = SHA-256(RFC 8785 of ' +
        '{ passportUid, version, versionId, previous_version_id, previousHash, contentHash, merkleRoot, amendmentReason, ' +
        'publishedAt }); version N+1 carries the versionId and hash of N.',
      tags: ['Passports'],
      auth: { scopes: [...read.scopes] },
      request: { params: IdParam },
      responses: { 200: { description: 'The chain', schema: HistorySchema } },
      errors: ['PASSPORT_NOT_FOUND'],
      handler: async ({ principal, params }) => ({
        status: 200,
        body: await passportHistory(db, principal.tenant.id, params.id),
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/passports/{id}/as-of',
      operationId: 'getPassportAsOf',
      summary: 'The passport as it stood at an instant',
      description:
        'Scope dpp:read. A projection of the version chain, the applied commands and the product void at `date`: the version ' +
        'current then, the command state, the disclosure tier, what the public route answered and readyToPrint. 404 ' +
        'PASSPORT_NOT_FOUND only before the first version (unlike the service the spec describes, which answers 404 always).',
      tags: ['Passports'],
      auth: { scopes: [...read.scopes] },
      request: { params: IdParam, query: AsOfQuery },
      responses: { 200: { description: 'The projection', schema: LooseObject } },
      errors: ['PASSPORT_NOT_FOUND'],
      handler: async ({ principal, params, query }) => {
        const instant = new Date(query.date);
        if (Number.isNaN(instant.getTime()))
          throw ApiError.validation('date', 'date: must be an ISO 8601 date or date-time');
        return { status: 200, body: await passportAsOf(db, principal.tenant.id, params.id, instant) };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/passports/{id}/proofs/{section}',
      operationId: 'getPassportSectionProof',
      summary: 'The Merkle path proving one section of a version against its merkleRoot',
      description:
        'Scope dpp:read. Query version (default: current). Recompute: leaf = SHA-256(0x00 ‖ RFC 8785 {"name","content"}); for ' +
        'each step, SHA-256(0x01 ‖ left ‖ right) with the sibling on its `side`; the result equals merkleRoot, which the ' +
        'publish-dpp credential signs.',
      tags: ['Passports'],
      auth: { scopes: [...read.scopes] },
      request: { params: SectionParam, query: ProofQuery },
      responses: { 200: { description: 'The proof', schema: LooseObject } },
      errors: ['PASSPORT_NOT_FOUND'],
      handler: async ({ principal, params, query }) => ({
        status: 200,
        body: await sectionProofOf(db, principal.tenant.id, params.id, params.section, query.version),
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/passports/{id}/lifecycle-log',
      operationId: 'getPassportLifecycleLog',
      summary:
        "The passport's lifecycle log (VALIDATION_RESULT_ANCHORED, VERSION_PUBLISHED, COMMAND_APPLIED, ...)",
      description: 'Scope dpp:read. Oldest first.',
      tags: ['Passports'],
      auth: { scopes: [...read.scopes] },
      request: { params: IdParam },
      responses: { 200: { description: 'The log', schema: LooseObject } },
      handler: async ({ principal, params }) => ({
        status: 200,
        body: await lifecycleLog(db, principal.tenant.id, params.id),
      }),
    }),
  ];
}
