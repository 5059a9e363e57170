import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compactVerify, importJWK } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentError } from '../errors.js';
import { generateDeviceKey, keyFilePath, loadKeyFile, writeKeyFile } from './keys.js';
import { clientAssertion } from './token-client.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dpp-agent-keys-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('device key', () => {
  it('is stored with mode 0600 and loads back to the same key', async () => {
    const { key, privateJwk } = await generateDeviceKey();
    const file = keyFilePath(dir);
    await writeKeyFile(file, privateJwk);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const loaded = await loadKeyFile(file);
    expect(loaded.publicJwk).toEqual(key.publicJwk);
    expect(loaded.kid).toBe(key.kid);
    // What the loaded key signs verifies with the public key.
    const jwt = await clientAssertion(loaded, 'dev-1', 'https://cp.example/token');
    const verified = await compactVerify(jwt, await importJWK({ ...key.publicJwk, alg: 'EdDSA' }, 'EdDSA'));
    expect(JSON.parse(new TextDecoder().decode(verified.payload))).toMatchObject({
      iss: 'dev-1',
      sub: 'dev-1',
      aud: 'https://cp.example/token',
    });
    expect(readFileSync(file, 'utf8')).toContain('"d"');
  });

  it('refuses a key file that others can read, naming the fix', async () => {
    const { privateJwk } = await generateDeviceKey();
    const file = keyFilePath(dir);
    await writeKeyFile(file, privateJwk);
    chmodSync(file, 0o644);
    await expect(loadKeyFile(file)).rejects.toSatisfy(
      (err) => isAgentError(err, 'KEY_FILE_MODE') && /chmod 600/.test((err as Error).message),
    );
  });

  it('says "not enrolled" without a key and refuses a key that is not Ed25519', async () => {
    await expect(loadKeyFile(keyFilePath(dir))).rejects.toSatisfy((e) => isAgentError(e, 'NOT_ENROLLED'));
    const file = keyFilePath(dir);
    writeFileSync(file, JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' }), { mode: 0o600 });
    await expect(loadKeyFile(file)).rejects.toSatisfy((e) => isAgentError(e, 'KEY_INVALID'));
  });
});
