import { z } from 'zod';
import { publicRoute, type RouteDef } from '../http/index.js';
import type { Keyring } from './keyring.js';

const JwksSchema = z
  .object({
    keys: z.array(z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string() }).loose()),
  })
  .meta({ id: 'JsonWebKeySet' });

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
  ];
}
