/**
 * What enrollment gave the device, kept in `identity.json` beside the key: who it is and where the
 * control plane, its token endpoint and its broker are.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { AgentError } from '../errors.js';

export const IDENTITY_FILE = 'identity.json';

export const IdentitySchema = z.object({
  deviceId: z.uuid(),
  tenantId: z.uuid(),
  name: z.string(),
  site: z.string().nullable(),
  printerNames: z.array(z.string()),
  /** The URL the device enrolled with: every API call goes there. */
  controlPlaneUrl: z.url(),
  /** The control plane's issuer (`iss` of envelopes and tokens). */
  issuer: z.string(),
  /** The advertised token endpoint: the `aud` of client assertions. */
  tokenEndpoint: z.string(),
  jwksUri: z.string(),
  mqtt: z.object({ url: z.string().nullable(), topicPrefix: z.string() }),
  /** Thumbprint of the enrolled public key. */
  keyThumbprint: z.string(),
  enrolledAt: z.iso.datetime(),
});
export type Identity = z.infer<typeof IdentitySchema>;

export function identityPath(dataDir: string): string {
  return path.join(dataDir, IDENTITY_FILE);
}

export async function readIdentity(dataDir: string): Promise<Identity> {
  const file = identityPath(dataDir);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new AgentError(
        'NOT_ENROLLED',
        `not enrolled (no ${file}): run dpp-agent enroll --url ... --token ...`,
      );
    throw err;
  }
  const parsed = IdentitySchema.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new AgentError(
      'NOT_ENROLLED',
      `${file} is not a valid identity: ${parsed.error.issues[0]?.message}`,
    );
  return parsed.data;
}

export async function writeIdentity(dataDir: string, identity: Identity): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = identityPath(dataDir);
  const tmp = `${file}.${randomUUID()}.tmp`;
  await writeFile(tmp, JSON.stringify(identity, null, 2) + '\n', { mode: 0o600 });
  await rename(tmp, file);
}
