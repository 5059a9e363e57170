import { actorOf, route, type RouteDef } from '../http/index.js';
import {
  BroadcastBody,
  BroadcastResultSchema,
  IdParam,
  ProductIdParam,
  PublishBody,
  PublishDppBody,
  PublishResultSchema,
  RegistrationSchema,
} from './api-schemas.js';
import { broadcastPassport } from './broadcast.js';
import { publishVersion } from './publish.js';
import { publishDpp, registrationView } from './register.js';
import type { PassportRouteDeps } from './routes.js';
import { versionView } from './views.js';

export function publicationRoutes(deps: PassportRouteDeps): RouteDef[] {
  const { db } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/dpp/{productId}/publish',
      operationId: 'publishPassportVersion',
      summary: 'Publish the passport: mint an immutable version N+1',
      description:
        'Scope dpp:edit (the spec names none for this operation; we use the generation scope). Mints version N+1 from the ' +
        "passport's working content with `updates` merged by section; its previous_version_id and previousHash chain it to " +
        'version N (verify the chain from GET /passports/{id}/history). Answers passportUid (the product id). Emits ' +
        'product.published and marks the product ever-published. Does not register the Digital Link (publish-dpp does) and ' +
        'does not move the command lifecycle. 422 INVALID_STATE_TRANSITION before a generation succeeded, for a voided product ' +
        'and for an archived, revoked or recycled passport.',
      tags: ['Passports'],
      auth: { scopes: ['dpp:edit'] },
      idempotency: 'recommended',
      request: { params: ProductIdParam, body: PublishBody },
      responses: { 201: { description: 'The new version', schema: PublishResultSchema } },
      errors: ['INVALID_STATE_TRANSITION'],
      handler: async ({ principal, params, body, correlationId }) => {
        const { version, state } = await publishVersion(
          db,
          { tenantId: principal.tenant.id, actor: actorOf(principal), correlationId, now: deps.now },
          params.productId,
          body,
        );
        return {
          status: 201,
          headers: { Location: `/api/v2/passports/${params.productId}/history` },
          body: {
            passportUid: params.productId,
            state,
            version: versionView(version, version.version),
            links: {
              history: `/api/v2/passports/${params.productId}/history`,
              register: `/api/v2/products/${params.productId}/publish-dpp`,
              public: `/api/v2/public/passport/${params.productId}`,
            },
          },
        };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/products/{id}/publish-dpp',
      operationId: 'publishDpp',
      summary:
        'Register the Digital Link: make the item resolvable, with a signed credential and a Merkle root',
      description:
        'Scope products:edit; out of scope is 403 FORBIDDEN (not API_SCOPE_DENIED). Idempotency-Key required. Registers the ' +
        "GS1 Digital Link of the product's published passport (dpp_identifiers goes from 0 to 1; /01/{gtin}/21/{serial} then " +
        "resolves) and answers a W3C VC signed by the tenant's did:key (eddsa-jcs-2022) whose subject carries the merkleRoot " +
        'over the content sections (RFC 6962 over RFC 8785 sections; a section proof is at GET /passports/{id}/proofs/{section}). ' +
        'passportType is not defaulted: when omitted, battery for a battery-marked product, otherwise generic. 503 ' +
        'EIDAS_ACTOR_BINDING_UNAVAILABLE in production (no credential issued); 503 COMPLIANCE_EVALUATION_UNAVAILABLE for a ' +
        'battery-marked product or a battery passportType; 422 INVALID_STATE_TRANSITION before a version is published. 201 on ' +
        'the first registration, 200 when repeated (re-issued for a newer version).',
      tags: ['Passports'],
      auth: { scopes: ['products:edit'], deniedCode: 'FORBIDDEN' },
      idempotency: 'required',
      request: { params: IdParam, body: PublishDppBody },
      responses: {
        201: { description: 'Registered', schema: RegistrationSchema },
        200: {
          description: 'Already registered (for a newer version, re-issued)',
          schema: RegistrationSchema,
        },
      },
      errors: [
        'EIDAS_ACTOR_BINDING_UNAVAILABLE',
        'COMPLIANCE_EVALUATION_UNAVAILABLE',
        'INVALID_STATE_TRANSITION',
        'ISSUANCE_FAILED',
      ],
      handler: async ({ principal, params, body, correlationId }) => {
        const { created, identifier, version } = await publishDpp(
          {
            db,
            secrets: deps.secrets,
            env: deps.env,
            signer: deps.signer,
            publicBaseUrl: deps.publicBaseUrl,
          },
          { tenantId: principal.tenant.id, actor: actorOf(principal), correlationId, now: deps.now },
          params.id,
          body,
        );
        return { status: created ? 201 : 200, body: registrationView(identifier, version) };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/passports/{id}/publish',
      operationId: 'broadcastPassport',
      summary: 'Broadcast an approved or published passport to external registries',
      description:
        'Scope passports:publish, mid_market tier and up (a lower tier is 403 FORBIDDEN). registries is a subset of CATENA_X, ' +
        'GS1, EBSI in upper case (lower case is 400 VALIDATION_ERROR) and, unlike the service the spec describes, it is ' +
        'honoured: only those registries receive the passport (all configured ones when omitted). Each configured connector ' +
        '(REGISTRY_CONNECTORS) receives one HTTP POST of the passport JSON; every answer is reported. 503 REGISTRY_UNAVAILABLE ' +
        'when no connector is configured (always in the sandbox) or a chosen registry has none; 422 PASSPORT_NOT_PUBLISHABLE ' +
        'unless the passport is approved or published in the command lifecycle, not voided, with a version or passportData.',
      tags: ['Passports'],
      auth: { scopes: ['passports:publish'], minTier: 'mid_market' },
      idempotency: 'recommended',
      request: { params: IdParam, body: BroadcastBody },
      responses: { 200: { description: 'What each registry answered', schema: BroadcastResultSchema } },
      errors: ['REGISTRY_UNAVAILABLE', 'PASSPORT_NOT_PUBLISHABLE'],
      handler: async ({ principal, params, body, correlationId }) => ({
        status: 200,
        body: await broadcastPassport(
          { db, connectors: deps.registryConnectors, publicBaseUrl: deps.publicBaseUrl },
          {
            tenantId: principal.tenant.id,
            actor: actorOf(principal),
            correlationId,
            now: deps.now,
            sandbox: principal.tenant.sandbox,
          },
          params.id,
          body,
        ),
      }),
    }),
  ];
}
