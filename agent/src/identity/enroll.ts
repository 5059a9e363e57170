/**
 * Enrollment: the device makes its own Ed25519 key, proves possession with a JWT bound to the one-time
 * token (typ `dpp-enroll+jwt`, aud `urn:dpp:devices:enroll`, `token_hash` = base64url(SHA-256(token))),
 * and stores what the control plane answers. The key is written (0600) before the call, and removed again
 * if the control plane refuses, so a refused enrollment leaves nothing behind.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import { SignJWT } from 'jose';
import {
  ENROLLMENT_PROOF_AUDIENCE,
  ENROLLMENT_PROOF_TYPE,
  EnrollResponseSchema,
  type EnrollRequest,
} from '@dpp/shared';
import { AgentError } from '../errors.js';
import { httpError, httpExchange, joinUrl, type FetchLike } from '../api/http.js';
import { generateDeviceKey, keyFilePath, writeKeyFile, type DeviceKey } from './keys.js';
import { identityPath, writeIdentity, type Identity } from './store.js';

export const AGENT_VERSION = '0.1.0';

export interface EnrollOptions {
  /** Base URL of the control plane, e.g. https://dpp.example.com */
  url: string;
  /** The one-time enrollment token (shown once in the control plane). */
  token: string;
  /** Device name; the host name by default. */
  name?: string | undefined;
  dataDir: string;
  /** Printer names reported as facts. */
  printers?: string[];
  /** Replace an existing enrollment in this data folder. */
  force?: boolean;
  timeoutMs?: number;
  fetch?: FetchLike;
}

export function enrollmentProof(key: DeviceKey, token: string): Promise<string> {
  return new SignJWT({ token_hash: createHash('sha256').update(token).digest('base64url') })
    .setProtectedHeader({ alg: 'EdDSA', typ: ENROLLMENT_PROOF_TYPE })
    .setAudience(ENROLLMENT_PROOF_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('2m')
    .sign(key.privateKey);
}

export async function enroll(options: EnrollOptions): Promise<Identity> {
  const keyFile = keyFilePath(options.dataDir);
  if (!options.force && (existsSync(keyFile) || existsSync(identityPath(options.dataDir)))) {
    throw new AgentError(
      'ALREADY_ENROLLED',
      `${options.dataDir} already holds an enrollment; use --force to replace it`,
    );
  }
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const { key, privateJwk } = await generateDeviceKey();
  const body: EnrollRequest = {
    token: options.token,
    name: options.name ?? os.hostname(),
    publicKeyJwk: key.publicJwk,
    facts: {
      hostname: os.hostname(),
      agentVersion: AGENT_VERSION,
      os: `${os.platform()} ${os.release()}`,
      ...(options.printers ? { printers: options.printers } : {}),
    },
    proof: await enrollmentProof(key, options.token),
  };
  await rm(keyFile, { force: true });
  await writeKeyFile(keyFile, privateJwk);
  try {
    const answer = await httpExchange(
      {
        method: 'POST',
        url: joinUrl(options.url, '/api/v2/devices/enroll'),
        json: body,
        timeoutMs: options.timeoutMs ?? 15_000,
      },
      options.fetch,
    );
    if (answer.status !== 201 && answer.status !== 200) {
      const err = httpError('enroll', answer);
      throw new AgentError(
        'ENROLL_FAILED',
        answer.status === 401 ? 'enroll: the token is unknown, used or expired (401)' : err.message,
        { status: err.status, apiCode: err.apiCode, details: err.details },
      );
    }
    const parsed = EnrollResponseSchema.safeParse(answer.body);
    if (!parsed.success) throw new AgentError('BAD_RESPONSE', 'enroll: the answer is not an enrollment');
    const d = parsed.data.data;
    const identity: Identity = {
      deviceId: d.deviceId,
      tenantId: d.tenantId,
      name: d.name,
      site: d.site,
      printerNames: d.printerNames,
      controlPlaneUrl: options.url.replace(/\/+$/, ''),
      issuer: d.issuer,
      tokenEndpoint: d.tokenEndpoint,
      jwksUri: d.jwksUri,
      mqtt: d.mqtt,
      keyThumbprint: key.kid,
      enrolledAt: new Date().toISOString(),
    };
    await writeIdentity(options.dataDir, identity);
    return identity;
  } catch (err) {
    await rm(keyFile, { force: true });
    throw err;
  }
}
