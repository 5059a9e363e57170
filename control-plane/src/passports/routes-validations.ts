import { actorOf, route, type RouteDef } from '../http/index.js';
import { IdParam, ValidationAnchoredSchema, ValidationBody, ValidationListSchema } from './api-schemas.js';
import type { PassportRouteDeps } from './routes.js';
import { anchorValidation, listValidations } from './validations.js';

export function validationRoutes(deps: PassportRouteDeps): RouteDef[] {
  const { db } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/passports/{id}/validations',
      operationId: 'anchorPassportValidation',
      summary: 'Anchor a validation-result credential into the lifecycle log (VALIDATION_RESULT_ANCHORED)',
      description:
        'Scope dpp:edit or supply_chain:edit (passport:write does not satisfy it). Verified before any write: the issuer is a ' +
        'DID of an accepted method that resolves offline, i.e. did:key (an https issuer, did:web or did:ebsi is 422 ' +
        'EUDIW_INCOMPATIBLE_DID_METHOD); a single DataIntegrityProof, eddsa-jcs-2022, assertionMethod, verificationMethod DID ' +
        'equal to the issuer DID, and the Ed25519 signature verifies (else 422 VALIDATION_CREDENTIAL_NOT_VERIFIED). digest is ' +
        'SHA-256 hex of the RFC 8785 form of the VC: re-anchoring the same VC records nothing new and answers 201 with ' +
        "the first entry (same digest, anchoredAt and eventId). Tenant-guarded: another tenant's passport is 404. Accepted before the first generation, so required credentials " +
        "(a battery's declaration of conformity) can be anchored first.",
      tags: ['Passports'],
      auth: { scopes: ['dpp:edit', 'supply_chain:edit'] },
      idempotency: 'recommended',
      request: { params: IdParam, body: ValidationBody },
      responses: {
        201: {
          description: 'Anchored, or anchored before (the first entry: same digest, anchoredAt and eventId)',
          schema: ValidationAnchoredSchema,
        },
      },
      errors: ['VALIDATION_CREDENTIAL_NOT_VERIFIED', 'EUDIW_INCOMPATIBLE_DID_METHOD'],
      handler: async ({ principal, params, body, correlationId }) => {
        const { upi, entry } = await anchorValidation(
          db,
          {
            tenantId: principal.tenant.id,
            actor: actorOf(principal),
            correlationId,
            now: deps.now,
            publicBaseUrl: deps.publicBaseUrl,
          },
          params.id,
          body,
        );
        return {
          status: 201,
          body: {
            upi,
            digest: entry.digest,
            anchoredAt: entry.occurredAt,
            eventId: entry.eventId,
            signatureAlgorithm: entry.signatureAlgorithm,
            jrcAnchor: entry.jrcAnchor,
          },
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/passports/{id}/validations',
      operationId: 'listPassportValidations',
      summary: 'Anchored validations and readyToPrint',
      description:
        'Scope dpp:read. readyToPrint is true only with at least one validation and the passport live on the public route ' +
        '(a published version, not voided, published to the public, command state draft or published).',
      tags: ['Passports'],
      auth: { scopes: ['dpp:read'] },
      request: { params: IdParam },
      responses: { 200: { description: 'The validations', schema: ValidationListSchema } },
      handler: async ({ principal, params }) => ({
        status: 200,
        body: await listValidations(db, principal.tenant.id, params.id, deps.publicBaseUrl),
      }),
    }),
  ];
}
