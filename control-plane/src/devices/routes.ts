import { z } from 'zod';
import {
  DEVICE_SCOPE,
  Ed25519PublicJwkSchema,
  EnrollRequestSchema,
  EnrollResponseSchema,
  MqttCredentialsSchema,
  isTopicLevel,
} from '@dpp/shared';
import {
  ApiError,
  actorOf,
  publicRoute,
  route,
  type RouteDef,
  UuidParam,
  dataEnvelope,
} from '../http/index.js';
import type { Broker } from '../broker/index.js';
import type { Keyring } from '../signing/index.js';
import type { DeviceService } from './devices.js';
import { signedDeviceStatement } from './statement.js';

const DeviceSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    site: z.string().nullable(),
    printerNames: z.array(z.string()),
    facts: z.record(z.string(), z.unknown()),
    status: z.enum(['active', 'revoked']),
    keyThumbprint: z.string().meta({ description: 'RFC 7638 SHA-256 thumbprint of the device public key' }),
    enrolledAt: z.iso.datetime(),
    keyRotatedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
    lastSeenAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Device' });

const EnrollmentTokenSchema = z
  .object({
    id: z.uuid(),
    label: z.string().nullable(),
    site: z.string().nullable(),
    printerNames: z.array(z.string()),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
    usedAt: z.iso.datetime().nullable(),
    deviceId: z.uuid().nullable(),
    status: z.enum(['pending', 'used', 'expired']),
  })
  .meta({ id: 'EnrollmentToken' });

const printerName = z.string().min(1).max(64).refine(isTopicLevel, 'must not contain /, + or #');

const CreateEnrollmentToken = z
  .object({
    label: z.string().max(100).optional(),
    site: z.string().max(100).optional(),
    printerNames: z.array(printerName).max(64).optional(),
    expiresInSeconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 86_400)
      .default(86_400),
  })
  .strict()
  .meta({ id: 'CreateEnrollmentToken' });

export interface DeviceRouteDeps {
  devices: DeviceService;
  issuer: string;
  tokenEndpoint: string;
  broker: Pick<Broker, 'deviceUrl' | 'deviceAuth' | 'admitDevice'>;
  /** Called after a revoke commits: closes the device's MQTT sessions and removes its broker login. */
  onRevoked: (deviceId: string) => Promise<void>;
  /** Signs device statements (its keys are in the public signing key history). */
  keyring: Pick<Keyring, 'signCompact'>;
  now: () => number;
  /** Called after a key rotation commits: the broker login of the old key stops working. */
  onKeyRotated: (device: { tenantId: string; deviceId: string; keyThumbprint: string }) => Promise<void>;
}

const manage = { scopes: ['devices:manage'] } as const;

export function deviceRoutes(deps: DeviceRouteDeps): RouteDef[] {
  const { devices } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/devices/enrollment-tokens',
      operationId: 'createEnrollmentToken',
      summary: 'Create a one-time, expiring enrollment token (the token is shown once)',
      tags: ['Devices'],
      auth: manage,
      idempotency: 'recommended',
      request: { body: CreateEnrollmentToken },
      responses: {
        201: {
          description: 'The token',
          schema: dataEnvelope(
            EnrollmentTokenSchema.extend({ token: z.string() }).meta({ id: 'EnrollmentTokenWithSecret' }),
          ),
        },
      },
      handler: async ({ principal, body, correlationId }) => ({
        status: 201,
        body: {
          data: await devices.createEnrollmentToken(principal.tenant.id, body, {
            actor: actorOf(principal),
            correlationId,
          }),
        },
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/devices/enrollment-tokens',
      operationId: 'listEnrollmentTokens',
      summary: 'List enrollment tokens (newest 200; secrets are never returned)',
      tags: ['Devices'],
      auth: manage,
      responses: { 200: { description: 'Tokens', schema: dataEnvelope(z.array(EnrollmentTokenSchema)) } },
      handler: async ({ principal }) => ({
        status: 200,
        body: { data: await devices.listEnrollmentTokens(principal.tenant.id) },
      }),
    }),
    publicRoute({
      method: 'post',
      path: '/api/v2/devices/enroll',
      operationId: 'enrollDevice',
      summary: 'Enroll a device with a one-time token, its own Ed25519 public key and a proof of possession',
      description:
        '`proof` is a JWT (header typ `dpp-enroll+jwt`, alg EdDSA) signed by the device private key, with ' +
        '`aud` = `urn:dpp:devices:enroll`, `token_hash` = base64url(SHA-256(token)), `iat` and `exp` at most ' +
        '300 s apart. The token is used up. An unknown, used or expired token is 401.',
      tags: ['Devices'],
      auth: 'none',
      ipLimit: { budget: 'credentials', failedStatuses: [401] },
      request: { body: EnrollRequestSchema },
      responses: { 201: { description: 'Enrolled', schema: EnrollResponseSchema } },
      errors: ['VALIDATION_ERROR'],
      handler: async ({ body, correlationId }) => {
        const { device, tenantId } = await devices.enroll(body, correlationId);
        return {
          status: 201,
          headers: { Location: `/api/v2/devices/${device.id}` },
          body: {
            data: {
              deviceId: device.id,
              tenantId,
              name: device.name,
              site: device.site,
              printerNames: device.printerNames,
              issuer: deps.issuer,
              tokenEndpoint: deps.tokenEndpoint,
              jwksUri: `${deps.issuer}/.well-known/jwks.json`,
              mqtt: { url: deps.broker.deviceUrl, topicPrefix: devices.topicPrefix(tenantId, device.id) },
            },
          },
        };
      },
    }),
    route({
      method: 'get',
      path: '/api/v2/devices',
      operationId: 'listDevices',
      summary: "List the workspace's devices",
      tags: ['Devices'],
      auth: manage,
      responses: {
        200: { description: 'Devices, newest first', schema: dataEnvelope(z.array(DeviceSchema)) },
      },
      handler: async ({ principal }) => ({
        status: 200,
        body: { data: await devices.list(principal.tenant.id) },
      }),
    }),
    route({
      method: 'get',
      path: '/api/v2/devices/{id}',
      operationId: 'getDevice',
      summary: 'Read one device (an admin key, or the device itself)',
      tags: ['Devices'],
      auth: { scopes: ['devices:manage', DEVICE_SCOPE], principals: ['api_key', 'device'] },
      request: { params: UuidParam },
      responses: { 200: { description: 'The device', schema: dataEnvelope(DeviceSchema) } },
      handler: async ({ principal, params }) => {
        if (principal.type === 'device' && principal.id !== params.id) throw ApiError.notFound('Device');
        return { status: 200, body: { data: await devices.get(principal.tenant.id, params.id) } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/devices/{id}/revoke',
      operationId: 'revokeDevice',
      summary: 'Revoke a device: its tokens stop working at once and its MQTT session is closed',
      tags: ['Devices'],
      auth: manage,
      idempotency: 'recommended',
      request: { params: UuidParam },
      responses: { 200: { description: 'The revoked device', schema: dataEnvelope(DeviceSchema) } },
      errors: ['ALREADY_REVOKED'],
      handler: async ({ principal, params, correlationId }) => {
        const device = await devices.revoke(principal.tenant.id, params.id, {
          actor: actorOf(principal),
          correlationId,
        });
        await deps.onRevoked(device.id);
        return { status: 200, body: { data: device } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/devices/{id}/rotate-key',
      operationId: 'rotateDeviceKey',
      summary: 'The device replaces its own key pair',
      description:
        'Called by the device with its access token. `proof` is a JWT signed by the NEW key (typ ' +
        '`dpp-key-rotation+jwt`, aud `urn:dpp:devices:rotate-key`, sub = device id, at most 300 s). Later ' +
        'client assertions must be signed by the new key.',
      tags: ['Devices'],
      auth: { scopes: [DEVICE_SCOPE], principals: ['device'] },
      idempotency: 'recommended',
      request: {
        params: UuidParam,
        body: z
          .object({ publicKeyJwk: Ed25519PublicJwkSchema, proof: z.string().max(4096) })
          .meta({ id: 'RotateDeviceKey' }),
      },
      responses: {
        200: { description: 'The device with its new key thumbprint', schema: dataEnvelope(DeviceSchema) },
      },
      handler: async ({ principal, params, body, correlationId }) => {
        if (principal.id !== params.id) throw ApiError.notFound('Device');
        const device = await devices.rotateKey(principal.tenant.id, params.id, body, {
          actor: actorOf(principal),
          correlationId,
        });
        await deps.onKeyRotated({
          tenantId: principal.tenant.id,
          deviceId: device.id,
          keyThumbprint: device.keyThumbprint,
        });
        return { status: 200, body: { data: device } };
      },
    }),
    publicRoute({
      method: 'get',
      path: '/api/v2/public/devices/{id}/statement',
      operationId: 'getDeviceStatement',
      summary: "The control plane's signed statement about a device, for verifying what it signed",
      description:
        'No credential; CORS. `{ statement }`: a compact JWS (EdDSA, typ `dpp-device-statement+jws`, under the keys ' +
        'of GET /api/v2/public/signing-keys) over the canonical JSON of `{ iss, deviceId, tenantId, site, enrolledAt, ' +
        'revokedAt, keys: [{ kty, crv, x, kid, validFrom, validUntil }], issuedAt }`: every public key the device has ' +
        'had (kid = RFC 7638 thumbprint) with the window it held it. A signature by the device counts when it was made ' +
        'inside its key’s window and before any revocation. No device name, facts or printers. Plain 404 for an unknown id.',
      tags: ['Public'],
      auth: 'none',
      ipLimit: { budget: 'public' },
      request: { params: UuidParam },
      responses: {
        200: {
          description: 'The statement',
          schema: z.object({ statement: z.string() }).meta({ id: 'DeviceStatement' }),
        },
      },
      handler: async ({ params }) => {
        const statement = await signedDeviceStatement(
          { devices, keyring: deps.keyring, issuer: deps.issuer, now: deps.now },
          params.id.toLowerCase(),
        );
        if (!statement) throw ApiError.notFound('Device');
        return { status: 200, body: { statement }, headers: { 'Cache-Control': 'no-cache' } };
      },
    }),
    route({
      method: 'post',
      path: '/api/v2/devices/{id}/mqtt-credentials',
      operationId: 'getDeviceMqttCredentials',
      summary: "The device's own MQTT broker login",
      description:
        'Called by the device before it connects to the broker. With `auth` = `access_token` (the embedded ' +
        'broker) `password` is null: connect with username = device id and a fresh access token as the ' +
        'password. With `auth` = `password` (an external Mosquitto the control plane administers), the ' +
        "device's login and ACL are created or brought up to date on the broker first, and `password` is " +
        'its own: it changes when the device key is rotated and stops working when the device is revoked. ' +
        'Never cached (Cache-Control: no-store). 503 when the broker does not answer.',
      tags: ['Devices'],
      auth: { scopes: [DEVICE_SCOPE], principals: ['device'] },
      request: { params: UuidParam },
      responses: { 200: { description: 'The login', schema: dataEnvelope(MqttCredentialsSchema) } },
      errors: ['SERVICE_UNAVAILABLE'],
      handler: async ({ principal, params }) => {
        if (principal.id !== params.id) throw ApiError.notFound('Device');
        const device = await devices.get(principal.tenant.id, params.id);
        const tenantId = principal.tenant.id;
        const login = await deps.broker
          .admitDevice({ tenantId, deviceId: device.id, keyThumbprint: device.keyThumbprint })
          .catch((err: unknown) => {
            throw new ApiError(
              'SERVICE_UNAVAILABLE',
              'The MQTT broker did not take the device login; try again',
              {
                cause: err,
                headers: { 'Retry-After': '5' },
              },
            );
          });
        return {
          status: 200,
          headers: { 'Cache-Control': 'no-store' },
          body: {
            data: {
              url: deps.broker.deviceUrl,
              topicPrefix: devices.topicPrefix(tenantId, device.id),
              auth: deps.broker.deviceAuth,
              username: login.username,
              password: login.password,
            },
          },
        };
      },
    }),
  ];
}
