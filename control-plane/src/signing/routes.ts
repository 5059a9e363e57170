import { z } from 'zod';
import { publicRoute, type RouteDef } from '../http/index.js';
import type { Keyring } from './keyring.js';

const JwksSchema = z
  .object({
    keys: z.array(z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string() }).loose()),
  })
  .meta({ id: 'JsonWebKeySet' });

const HistorySchema = z
  .object({
    keys: z.array(
      z
        .object({
          kty: z.string(),
          crv: z.string(),
          x: z.string(),
          kid: z.string(),
          signingWindow: z.object({ from: z.iso.datetime(), until: z.iso.datetime().nullable() }),
        })
        .loose(),
    ),
  })
  .meta({ id: 'SigningKeyHistory' });

export function signingRoutes(deps: { keyring: Keyring }): RouteDef[] {
  return [
    publicRoute({
      method: 'get',
      path: '/.well-known/jwks.json',
      operationId: 'getJwks',
      summary: "The control plane's public signing keys (access tokens, AIDC envelopes)",
      description:
        'Keys rotate; a retired key stays listed for a grace period so what it signed still verifies.',
      tags: ['Devices'],
      auth: 'none',
      responses: { 200: { description: 'JWK Set (RFC 7517)', schema: JwksSchema } },
      handler: async () => ({
        status: 200,
        body: deps.keyring.jwks(),
        headers: { 'Cache-Control': 'public, max-age=300' },
      }),
    }),
    publicRoute({
      method: 'get',
      path: '/api/v2/public/signing-keys',
      operationId: 'getSigningKeyHistory',
      summary: 'Every key the control plane ever signed with, and when (for verifying old proofs)',
      description:
        'No credential; CORS. A JWK Set of every signing key, retired ones included and never dropped, each with ' +
        '`signingWindow: { from, until }` (until is null for the current key). A seal receipt or an envelope verifies ' +
        'against the key its `kid` names, and counts only if it was signed inside that key’s window. For proofs, not ' +
        'for access tokens: /.well-known/jwks.json lists only the keys access tokens may be signed with.',
      tags: ['Public'],
      auth: 'none',
      ipLimit: { budget: 'public' },
      responses: { 200: { description: 'JWK Set (RFC 7517) with signing windows', schema: HistorySchema } },
      handler: async () => ({
        status: 200,
        body: { keys: await deps.keyring.signingHistory() },
        headers: { 'Cache-Control': 'public, max-age=300' },
      }),
    }),
  ];
}
