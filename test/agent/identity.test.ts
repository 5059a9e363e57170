/**
 * Enrollment and tokens against a real control plane: the agent's own client (not the test helper) makes
 * the key, proves possession, stores its identity and gets access tokens with private_key_jwt.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import {
  ControlPlaneClient,
  TokenClient,
  enroll,
  isAgentError,
  keyFilePath,
  loadKeyFile,
  readIdentity,
  remoteJwks,
  silentLogger,
} from '@dpp/agent';

describe.each(testDialects())('enrollment and tokens (%s)', (dialect) => {
  let t: TestControlPlane;
  let dir: string;

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-id-'));
  });
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function enrollmentToken(): Promise<string> {
    const r = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.admin,
      body: { printerNames: ['zebra-1'], site: 'Plant 1' },
    });
    expect(r.status).toBe(201);
    return r.body.data.token as string;
  }

  it('enrolls, stores the key 0600 and the identity, and gets tokens that the API accepts', async () => {
    const dataDir = path.join(dir, 'a');
    const identity = await enroll({ url: t.url, token: await enrollmentToken(), name: 'line-1', dataDir });
    expect(identity).toMatchObject({ tenantId: t.tenants.a.id, name: 'line-1', site: 'Plant 1' });
    expect((await stat(keyFilePath(dataDir))).mode & 0o777).toBe(0o600);
    expect(await readIdentity(dataDir)).toEqual(identity);

    const key = await loadKeyFile(keyFilePath(dataDir));
    expect(key.kid).toBe(identity.keyThumbprint);
    const tokens = new TokenClient({ identity, key, baseUrl: t.url, timeoutMs: 5000, log: silentLogger });
    const token = await tokens.token();
    expect(await tokens.token()).toBe(token); // cached
    const me = await t.call('GET', `/api/v2/devices/${identity.deviceId}`, { key: token });
    expect(me.status).toBe(200);
    expect(me.body.data.keyThumbprint).toBe(identity.keyThumbprint);

    // The access token verifies against the control plane's JWKS, which the envelope verifier uses too.
    const jwks = remoteJwks({ url: `${t.url}/.well-known/jwks.json` });
    const verified = await jwtVerify(token, jwks, { algorithms: ['EdDSA'] });
    expect(verified.payload.sub).toBe(identity.deviceId);

    tokens.invalidate();
    expect(await tokens.token()).not.toBe(token);

    const client = new ControlPlaneClient({ baseUrl: t.url, tokens, timeoutMs: 5000 });
    expect(await client.health()).toBe(true);
  });

  it('refuses a used token with a clear message and leaves no key behind', async () => {
    const token = await enrollmentToken();
    await enroll({ url: t.url, token, dataDir: path.join(dir, 'b') });
    const dataDir = path.join(dir, 'c');
    await expect(enroll({ url: t.url, token, dataDir })).rejects.toSatisfy(
      (err) => isAgentError(err, 'ENROLL_FAILED') && /unknown, used or expired/.test((err as Error).message),
    );
    await expect(stat(keyFilePath(dataDir))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('does not enroll twice into one data folder without --force', async () => {
    const dataDir = path.join(dir, 'd');
    const first = await enroll({ url: t.url, token: await enrollmentToken(), dataDir });
    await expect(enroll({ url: t.url, token: await enrollmentToken(), dataDir })).rejects.toSatisfy((e) =>
      isAgentError(e, 'ALREADY_ENROLLED'),
    );
    const second = await enroll({ url: t.url, token: await enrollmentToken(), dataDir, force: true });
    expect(second.deviceId).not.toBe(first.deviceId);
  });

  it('stops getting tokens once the device is revoked', async () => {
    const dataDir = path.join(dir, 'e');
    const identity = await enroll({ url: t.url, token: await enrollmentToken(), dataDir });
    const tokens = new TokenClient({
      identity,
      key: await loadKeyFile(keyFilePath(dataDir)),
      baseUrl: t.url,
      timeoutMs: 5000,
      log: silentLogger,
    });
    await tokens.token();
    const revoked = await t.call('POST', `/api/v2/devices/${identity.deviceId}/revoke`, {
      key: t.tenants.a.admin,
    });
    expect(revoked.status).toBe(200);
    tokens.invalidate();
    await expect(tokens.token()).rejects.toSatisfy(
      (err) => isAgentError(err, 'TOKEN_FAILED') && (err as { status?: number }).status === 401,
    );
  });
});
