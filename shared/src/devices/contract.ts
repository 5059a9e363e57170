import { z } from 'zod';

/** The scope every device access token carries (DESIGN.md: device tokens only). */
export const DEVICE_SCOPE = 'aidc:device';

/** `aud` of the proof-of-possession JWT a device signs with its new key when it enrolls. */
export const ENROLLMENT_PROOF_AUDIENCE = 'urn:dpp:devices:enroll';
/** `typ` header of that proof. */
export const ENROLLMENT_PROOF_TYPE = 'dpp-enroll+jwt';

/** RFC 7523 §2.2 client assertion type. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** An Ed25519 public key as a JWK (RFC 8037). */
export const Ed25519PublicJwkSchema = z
  .object({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be the base64url of 32 bytes'),
  })
  .loose();
export type Ed25519PublicJwk = z.infer<typeof Ed25519PublicJwkSchema>;

export const DeviceFactsSchema = z
  .object({
    hostname: z.string().max(255).optional(),
    agentVersion: z.string().max(64).optional(),
    os: z.string().max(128).optional(),
    printers: z.array(z.string().max(64)).max(64).optional(),
  })
  .loose();

/** POST /api/v2/devices/enroll */
export const EnrollRequestSchema = z.object({
  token: z.string().min(16).max(256),
  name: z.string().min(1).max(100),
  publicKeyJwk: Ed25519PublicJwkSchema,
  facts: DeviceFactsSchema.default({}),
  /** JWT (EdDSA) signed by the device key: aud ENROLLMENT_PROOF_AUDIENCE, token_hash, iat, exp. */
  proof: z.string().max(4096),
});
export type EnrollRequest = z.infer<typeof EnrollRequestSchema>;

export const EnrollResponseSchema = z.object({
  data: z.object({
    deviceId: z.uuid(),
    tenantId: z.uuid(),
    name: z.string(),
    site: z.string().nullable(),
    printerNames: z.array(z.string()),
    issuer: z.string(),
    tokenEndpoint: z.string(),
    jwksUri: z.string(),
    mqtt: z.object({ url: z.string().nullable(), topicPrefix: z.string() }),
  }),
});
export type EnrollResponse = z.infer<typeof EnrollResponseSchema>;

/**
 * POST /api/v2/devices/{id}/mqtt-credentials: the device's own broker login. With `auth: "access_token"`
 * (the embedded broker, or one that checks tokens itself) `password` is null and the device sends a fresh
 * access token as its password; with `auth: "password"` (an external Mosquitto the control plane
 * administers) `password` is the device's own, valid until its key is rotated or it is revoked.
 */
export const MqttCredentialsSchema = z
  .object({
    url: z.string().nullable(),
    topicPrefix: z.string(),
    auth: z.enum(['access_token', 'password']),
    username: z.string(),
    password: z.string().nullable(),
  })
  .meta({ id: 'MqttCredentials' });
export type MqttCredentials = z.infer<typeof MqttCredentialsSchema>;

/** `typ` of the statement the control plane signs about a device (GET /api/v2/public/devices/{id}/statement). */
export const DEVICE_STATEMENT_TYPE = 'dpp-device-statement+jws';

/**
 * What the control plane states about a device, signed under its keys (the signing key history): which
 * tenant and site it belongs to, when it was enrolled and revoked, and every public key it has had with the
 * window it held it (`kid` = the RFC 7638 thumbprint an evidence bundle names). A signature by the device
 * counts when it was made inside its key's window and before any revocation.
 */
export const DeviceStatementPayloadSchema = z.strictObject({
  iss: z.string(),
  deviceId: z.string(),
  tenantId: z.string(),
  site: z.string().nullable(),
  enrolledAt: z.iso.datetime(),
  revokedAt: z.iso.datetime().nullable(),
  keys: z.array(
    z.strictObject({
      kty: z.literal('OKP'),
      crv: z.literal('Ed25519'),
      x: z.string(),
      kid: z.string(),
      validFrom: z.iso.datetime(),
      validUntil: z.iso.datetime().nullable(),
    }),
  ),
  issuedAt: z.iso.datetime(),
});
export type DeviceStatementPayload = z.infer<typeof DeviceStatementPayloadSchema>;

/** RFC 6749 §5.1 token response. */
export const TokenResponseSchema = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
});
export type TokenResponse = z.infer<typeof TokenResponseSchema>;
