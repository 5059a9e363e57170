/**
 * registerDPP: POST /api/v2/dpps/{dppId}/register registers a published passport in the EU digital product
 * passport registry (eu-registry.ts); GET on the same path lists what the registry accepted. In production it
 * needs an eIDAS actor identity that cannot be bound yet: 501 with no body, the code in X-Service-Error-Code.
 */
import { z } from 'zod';
import { actorOf, dataEnvelope, route, type RouteDef } from '../http/index.js';
import { euRegistrations, registerInEuRegistry } from './eu-registry.js';
import { findPassport } from './retention.js';
import type { PassportRouteDeps } from './routes.js';

const DppIdParam = z.object({ dppId: z.uuid() });

const RegistrationSchema = z
  .object({
    dppId: z.uuid(),
    version: z.number().int().meta({ description: 'The passport version registered' }),
    versionId: z.uuid(),
    uniqueProductIdentifier: z.string().meta({ description: "The item's GS1 Digital Link" }),
    registryReference: z
      .string()
      .nullable()
      .meta({ description: "The registry's own id of the registration, when it answered one" }),
    registeredAt: z.iso.datetime(),
  })
  .meta({ id: 'EuRegistryRegistration' });

export function euRegistryRoutes(deps: PassportRouteDeps): RouteDef[] {
  const { db } = deps;
  const path = '/api/v2/dpps/{dppId}/register';
  return [
    route({
      method: 'post',
      path,
      operationId: 'registerDPP',
      summary: 'Register a published passport in the EU digital product passport registry (ESPR Art. 13)',
      description:
        'Scope products:edit. In production: 501 with no body, X-Service-Error-Code: EIDAS_ACTOR_BINDING_UNAVAILABLE. In ' +
        'development and test: the registration record (the Digital Link as unique product identifier, the public passport ' +
        'URL, the version, its hash and Merkle root, and the registration credential of publish-dpp) is POSTed to the EU ' +
        'registry connector (EU_REGISTRY_URL) with an Idempotency-Key of the version, and what it accepted is recorded: 201. ' +
        'The same version again answers its registration (200) and sends nothing. 503 REGISTRY_UNAVAILABLE when no ' +
        'connector is configured (always in the sandbox) or the registry does not accept it (details.registryStatus; nothing ' +
        'recorded, retry later); 422 PASSPORT_NOT_PUBLISHABLE until publish-dpp registered the current version.',
      tags: ['Passports'],
      auth: { scopes: ['products:edit'] },
      idempotency: 'recommended',
      request: { params: DppIdParam },
      responses: {
        201: { description: 'Registered', schema: dataEnvelope(RegistrationSchema) },
        200: { description: 'This version was registered already', schema: dataEnvelope(RegistrationSchema) },
        501: { description: 'Production: no eIDAS actor identity (code in the header)' },
      },
      errors: ['PASSPORT_NOT_FOUND', 'REGISTRY_UNAVAILABLE', 'PASSPORT_NOT_PUBLISHABLE'],
      handler: async ({ principal, params, correlationId }) => {
        if (deps.env === 'production')
          return { status: 501, headers: { 'X-Service-Error-Code': 'EIDAS_ACTOR_BINDING_UNAVAILABLE' } };
        const { created, registration } = await registerInEuRegistry(
          { db, registryUrl: deps.euRegistryUrl, publicBaseUrl: deps.publicBaseUrl },
          {
            tenantId: principal.tenant.id,
            actor: actorOf(principal),
            correlationId,
            now: deps.now,
            sandbox: principal.tenant.sandbox,
          },
          params.dppId,
        );
        return { status: created ? 201 : 200, body: { data: registration } };
      },
    }),
    route({
      method: 'get',
      path,
      operationId: 'listEuRegistrations',
      summary: 'The EU registry registrations of a passport, oldest first',
      description: 'Scope products:read. One per passport version the registry accepted; empty when none.',
      tags: ['Passports'],
      auth: { scopes: ['products:read'] },
      request: { params: DppIdParam },
      responses: { 200: { description: 'Oldest first', schema: dataEnvelope(z.array(RegistrationSchema)) } },
      errors: ['PASSPORT_NOT_FOUND'],
      handler: async ({ principal, params }) => {
        await findPassport(db, principal.tenant.id, params.dppId);
        return { status: 200, body: { data: await euRegistrations(db, principal.tenant.id, params.dppId) } };
      },
    }),
  ];
}
