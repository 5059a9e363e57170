import { createHash, randomUUID } from 'node:crypto';
import { type CryptoKey, SignJWT, exportJWK, generateKeyPair } from 'jose';
import {
  ENROLLMENT_PROOF_AUDIENCE,
  ENROLLMENT_PROOF_TYPE,
  type Ed25519PublicJwk,
  JWT_BEARER_ASSERTION,
} from '@dpp/shared';
import type { TestControlPlane } from './harness.js';

export interface TestDeviceKey {
  privateKey: CryptoKey;
  publicJwk: Ed25519PublicJwk;
}

export async function newDeviceKey(): Promise<TestDeviceKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(publicKey);
  return { privateKey, publicJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x! } };
}

export function enrollmentProof(
  key: TestDeviceKey,
  token: string,
  opts: { audience?: string } = {},
): Promise<string> {
  return new SignJWT({ token_hash: createHash('sha256').update(token).digest('base64url') })
    .setProtectedHeader({ alg: 'EdDSA', typ: ENROLLMENT_PROOF_TYPE })
    .setAudience(opts.audience ?? ENROLLMENT_PROOF_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('2m')
    .sign(key.privateKey);
}

export function clientAssertion(
  key: TestDeviceKey,
  deviceId: string,
  audience: string,
  jti = randomUUID(),
): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuer(deviceId)
    .setSubject(deviceId)
    .setAudience(audience)
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime('2m')
    .sign(key.privateKey);
}

/** The proof a device's rotate-key call carries: a JWT signed by the new key, naming the device. */
export function keyRotationProof(next: TestDeviceKey, deviceId: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', typ: 'dpp-key-rotation+jwt' })
    .setAudience('urn:dpp:devices:rotate-key')
    .setSubject(deviceId)
    .setIssuedAt()
    .setExpirationTime('2m')
    .sign(next.privateKey);
}

export interface EnrolledTestDevice {
  id: string;
  tenantId: string;
  key: TestDeviceKey;
  tokenEndpoint: string;
  mqttUrl: string | null;
  /** Fetches a fresh access token with a new client assertion. */
  accessToken(): Promise<string>;
}

/** Creates an enrollment token with `adminKey`, enrolls a new device with it, and returns the device. */
export async function enrollTestDevice(
  t: TestControlPlane,
  adminKey: string,
  opts: { name?: string; printerNames?: string[] } = {},
): Promise<EnrolledTestDevice> {
  const created = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
    key: adminKey,
    body: { printerNames: opts.printerNames ?? ['zebra-1'] },
  });
  if (created.status !== 201) throw new Error(`enrollment token: ${created.status} ${created.text}`);
  const token = created.body.data.token as string;
  const key = await newDeviceKey();
  const enrolled = await t.call('POST', '/api/v2/devices/enroll', {
    body: {
      token,
      name: opts.name ?? 'line-1',
      publicKeyJwk: key.publicJwk,
      facts: { hostname: 'test' },
      proof: await enrollmentProof(key, token),
    },
  });
  if (enrolled.status !== 201) throw new Error(`enroll: ${enrolled.status} ${enrolled.text}`);
  const d = enrolled.body.data;
  return {
    id: d.deviceId,
    tenantId: d.tenantId,
    key,
    tokenEndpoint: d.tokenEndpoint,
    mqttUrl: d.mqtt.url,
    accessToken: async () => {
      const r = await t.call('POST', '/api/v2/oauth/token', {
        headers: { 'Idempotency-Key': randomUUID() },
        body: {
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: await clientAssertion(key, d.deviceId, d.tokenEndpoint),
        },
      });
      if (r.status !== 200) throw new Error(`token: ${r.status} ${r.text}`);
      return r.body.access_token as string;
    },
  };
}
