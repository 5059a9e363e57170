import { decodeJwt } from 'jose';
import { z } from 'zod';
import { TokenResponseSchema } from '@dpp/shared';
import { nothingPublic, publicRoute, type RouteDef } from '../http/index.js';
import type { TokenService } from './tokens.js';

const TokenRequestSchema = z
  .object({
    grant_type: z.string().min(1),
    scope: z.string().max(1000).optional(),
    client_id: z.string().max(200).optional(),
    client_secret: z.string().max(500).optional(),
    client_assertion_type: z.string().max(200).optional(),
    client_assertion: z.string().max(4096).optional(),
  })
  .meta({ id: 'TokenRequest' });

function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  const m = header ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header) : null;
  if (!m) return null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  return i < 0
    ? null
    : { id: decodeURIComponent(decoded.slice(0, i)), secret: decodeURIComponent(decoded.slice(i + 1)) };
}

/** Who owns an Idempotency-Key on the token endpoint: the client, since no tenant is known yet. */
function clientOf(body: Record<string, unknown> | undefined, authorization: string | undefined): string {
  if (typeof body?.client_assertion === 'string') {
    try {
      return `client:${String(decodeJwt(body.client_assertion).sub)}`;
    } catch {
      return 'client:malformed';
    }
  }
  const basic = basicCredentials(authorization);
  return `client:${basic?.id ?? (typeof body?.client_id === 'string' ? body.client_id : 'anonymous')}`;
}

export function oauthRoutes(deps: { tokens: TokenService }): RouteDef[] {
  return [
    publicRoute({
      method: 'post',
      path: '/api/v2/oauth/token',
      operationId: 'issueToken',
      publicEffect: nothingPublic,
      summary: 'OAuth 2.0 client credentials: device (private_key_jwt) or API client (id and secret) tokens',
      description:
        'Form-encoded (RFC 6749) or JSON. Devices send `client_assertion_type` = ' +
        '`urn:ietf:params:oauth:client-assertion-type:jwt-bearer` and a `client_assertion` JWT signed by the ' +
        'device key (iss = sub = device id, aud = this endpoint URL or the issuer, exp within 300 s, unique jti). ' +
        'API clients send `client_id` (the API key id) and `client_secret` (its secret), in the body or as HTTP ' +
        'Basic. Errors keep the envelope; the RFC 6749 error name is in `details.error`. Idempotency-Key is ' +
        'required: a retry replays the same token.',
      tags: ['Devices'],
      auth: 'none',
      ipLimit: { budget: 'credentials', failedStatuses: [401] },
      idempotency: 'required',
      acceptsForm: true,
      idempotencyOwner: (req) =>
        clientOf(req.body as Record<string, unknown> | undefined, req.get('authorization')),
      request: { body: TokenRequestSchema },
      responses: { 200: { description: 'An access token', schema: TokenResponseSchema } },
      handler: async ({ body, req }) => {
        const basic = basicCredentials(req.get('authorization'));
        const token = await deps.tokens.issue({
          ...body,
          ...(basic ? { client_id: basic.id, client_secret: basic.secret } : {}),
        });
        return { status: 200, body: token, headers: { 'Cache-Control': 'no-store' } };
      },
    }),
  ];
}
