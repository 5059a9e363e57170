/**
 * The device key: Ed25519, generated on the device, never sent anywhere. The private JWK lives in one
 * file of the data folder with mode 0600 (written atomically), and a key file readable by others is
 * refused at load, as ssh does.
 */
import { randomUUID } from 'node:crypto';
import { chmod, open, rename, rm, stat } from 'node:fs/promises';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JWK,
} from 'jose';
import { Ed25519PublicJwkSchema, type Ed25519PublicJwk } from '@dpp/shared';
import { AgentError } from '../errors.js';

export const KEY_FILE = 'device-key.jwk.json';

export interface DeviceKey {
  privateKey: CryptoKey;
  publicJwk: Ed25519PublicJwk;
  /** RFC 7638 SHA-256 thumbprint of the public key; the `kid` of what the device signs. */
  kid: string;
}

async function fromPrivateJwk(jwk: JWK): Promise<DeviceKey> {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string' || typeof jwk.x !== 'string')
    throw new AgentError('KEY_INVALID', 'the key file does not hold an Ed25519 private JWK');
  const privateKey = (await importJWK({ ...jwk, alg: 'EdDSA' }, 'EdDSA')) as CryptoKey;
  const publicJwk = Ed25519PublicJwkSchema.parse({ kty: 'OKP', crv: 'Ed25519', x: jwk.x });
  return { privateKey, publicJwk, kid: await calculateJwkThumbprint(publicJwk, 'sha256') };
}

/** A new key pair; `privateJwk` is what {@link writeKeyFile} stores. */
export async function generateDeviceKey(): Promise<{ key: DeviceKey; privateJwk: JWK }> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const privateJwk = await exportJWK(privateKey);
  return { key: await fromPrivateJwk(privateJwk), privateJwk };
}

export function keyFilePath(dataDir: string): string {
  return path.join(dataDir, KEY_FILE);
}

/** Writes the private JWK with mode 0600: a temp file created 0600, fsynced, then renamed over. */
export async function writeKeyFile(file: string, privateJwk: JWK): Promise<void> {
  const tmp = `${file}.${randomUUID()}.tmp`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(JSON.stringify({ ...privateJwk, alg: 'EdDSA' }) + '\n');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(tmp, 0o600); // the umask cannot widen it, but a filesystem default ACL might have
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** The mode bits of the key file; anything beyond the owner's read/write is refused. */
export async function checkKeyFileMode(file: string): Promise<number> {
  const s = await stat(file);
  const mode = s.mode & 0o777;
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new AgentError(
      'KEY_FILE_MODE',
      `${file} is readable by others (mode ${mode.toString(8)}); run: chmod 600 ${file}`,
      { details: { file, mode: mode.toString(8) } },
    );
  }
  return mode;
}

/** Loads the device key; refuses a missing file, a wrong mode or a key that is not Ed25519. */
export async function loadKeyFile(file: string): Promise<DeviceKey> {
  let text: string;
  try {
    await checkKeyFileMode(file);
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new AgentError('NOT_ENROLLED', `no device key at ${file}: run dpp-agent enroll first`);
    throw err;
  }
  let jwk: JWK;
  try {
    jwk = JSON.parse(text) as JWK;
  } catch (err) {
    throw new AgentError('KEY_INVALID', `${file} is not JSON`, { cause: err });
  }
  return fromPrivateJwk(jwk);
}
