import { randomUUID } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JWT_BEARER_ASSERTION } from '@dpp/shared';
import {
  clientAssertion,
  enrollTestDevice,
  enrollmentProof,
  keyRotationProof,
  newDeviceKey,
  startTestControlPlane,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

describe.each(testDialects())('devices: enrollment, tokens, revocation (%s)', (dialect) => {
  let t: TestControlPlane;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
  });
  afterAll(() => t.close());

  const token = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.call('POST', '/api/v2/oauth/token', { headers: { 'Idempotency-Key': randomUUID(), ...headers }, body });

  it('creates enrollment tokens only with devices:manage, showing the secret once', async () => {
    const denied = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.readOnly,
      body: {},
    });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.required).toBe('devices:manage');
    const r = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.admin,
      body: { site: 'Plant 1', printerNames: ['zebra-1'], expiresInSeconds: 600 },
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ site: 'Plant 1', printerNames: ['zebra-1'], status: 'pending' });
    expect(r.body.data.token).toMatch(/^dpp_enr_/);
    const list = await t.call('GET', '/api/v2/devices/enrollment-tokens', { key: t.tenants.a.admin });
    expect(list.text).not.toContain(r.body.data.token);
    const bad = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.admin,
      body: { printerNames: ['a/b'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('printerNames[0]');
  });

  it('enrolls a device with proof of possession; the token is used up', async () => {
    const created = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.admin,
      body: { site: 'Plant 2', printerNames: ['zebra-9'] },
    });
    const enrollToken = created.body.data.token as string;
    const key = await newDeviceKey();
    const other = await newDeviceKey();
    // A proof signed by another key than the one presented is refused, and uses nothing up.
    const wrong = await t.call('POST', '/api/v2/devices/enroll', {
      body: {
        token: enrollToken,
        name: 'x',
        publicKeyJwk: key.publicJwk,
        proof: await enrollmentProof(other, enrollToken),
      },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.field).toBe('proof');
    // A proof for another token is refused.
    const misbound = await t.call('POST', '/api/v2/devices/enroll', {
      body: {
        token: enrollToken,
        name: 'x',
        publicKeyJwk: key.publicJwk,
        proof: await enrollmentProof(key, 'dpp_enr_other_token_xx'),
      },
    });
    expect(misbound.status).toBe(400);
    const ok = await t.call('POST', '/api/v2/devices/enroll', {
      body: {
        token: enrollToken,
        name: 'line-2',
        publicKeyJwk: key.publicJwk,
        facts: { os: 'linux' },
        proof: await enrollmentProof(key, enrollToken),
      },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data).toMatchObject({
      tenantId: t.tenants.a.id,
      site: 'Plant 2',
      printerNames: ['zebra-9'],
    });
    expect(ok.body.data.tokenEndpoint).toBe(`${ok.body.data.issuer}/api/v2/oauth/token`);
    expect(ok.body.data.mqtt.topicPrefix).toBe(`dpp/${t.tenants.a.id}/devices/${ok.body.data.deviceId}/`);
    const again = await t.call('POST', '/api/v2/devices/enroll', {
      body: {
        token: enrollToken,
        name: 'line-3',
        publicKeyJwk: key.publicJwk,
        proof: await enrollmentProof(key, enrollToken),
      },
    });
    expect(again.status).toBe(401);
    const device = await t.call('GET', `/api/v2/devices/${ok.body.data.deviceId}`, {
      key: t.tenants.a.admin,
    });
    expect(device.body.data).toMatchObject({ name: 'line-2', status: 'active', facts: { os: 'linux' } });
    expect(
      (await t.call('GET', `/api/v2/devices/${ok.body.data.deviceId}`, { key: t.tenants.b.admin })).status,
    ).toBe(404);
  });

  it('refuses an expired enrollment token', async () => {
    const created = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.admin,
      body: {},
    });
    await t.cp.store.db
      .updateTable('enrollment_tokens')
      .set({ expires_at: '2020-01-01T00:00:00.000Z' })
      .where('id', '=', created.body.data.id)
      .execute();
    const key = await newDeviceKey();
    const r = await t.call('POST', '/api/v2/devices/enroll', {
      body: {
        token: created.body.data.token,
        name: 'late',
        publicKeyJwk: key.publicJwk,
        proof: await enrollmentProof(key, created.body.data.token),
      },
    });
    expect(r.status).toBe(401);
  });

  it('issues a device access token for a private_key_jwt client assertion (RFC 7523), once per jti', async () => {
    const device = await enrollTestDevice(t, t.tenants.a.admin);
    const jti = randomUUID();
    const assertion = await clientAssertion(device.key, device.id, device.tokenEndpoint, jti);
    const body = {
      grant_type: 'client_credentials',
      client_assertion_type: JWT_BEARER_ASSERTION,
      client_assertion: assertion,
    };
    const r = await token(body);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 900, scope: 'aidc:device' });
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(decodeProtectedHeader(r.body.access_token)).toMatchObject({ alg: 'EdDSA', typ: 'at+jwt' });
    const prefix = `dpp/${t.tenants.a.id}/devices/${device.id}/`;
    expect(decodeJwt(r.body.access_token)).toMatchObject({
      sub: device.id,
      tenant_id: t.tenants.a.id,
      // Its broker rules, for a broker that reads them from the token (EMQX's JWT authenticator).
      acl: [
        { permission: 'allow', action: 'subscribe', topic: `${prefix}#` },
        { permission: 'allow', action: 'publish', topic: `${prefix}presence` },
        { permission: 'allow', action: 'publish', topic: `${prefix}printers/+/status` },
        { permission: 'deny', action: 'all', topic: '#' },
      ],
    });
    // The same assertion under another Idempotency-Key is a replay of its jti.
    const replay = await token(body);
    expect(replay.status).toBe(401);
    expect(replay.body.error.details.error).toBe('invalid_client');
    // The same request under the same Idempotency-Key replays the first answer.
    const key = randomUUID();
    const a2 = await clientAssertion(device.key, device.id, device.tokenEndpoint);
    const first = await token({ ...body, client_assertion: a2 }, { 'Idempotency-Key': key });
    const second = await token({ ...body, client_assertion: a2 }, { 'Idempotency-Key': key });
    expect(second.body.access_token).toBe(first.body.access_token);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    // The token works on a device route.
    const me = await t.call('GET', `/api/v2/devices/${device.id}`, { key: r.body.access_token });
    expect(me.status).toBe(200);
    // A device token cannot use admin routes: the caller is known, the operation is not theirs.
    const admin = await t.call('GET', '/api/v2/devices', { key: r.body.access_token });
    expect(admin.status).toBe(403);
    expect(admin.body.error).toMatchObject({
      code: 'API_SCOPE_DENIED',
      details: { required: 'devices:manage', available: ['aidc:device'] },
    });
  });

  it('requires Idempotency-Key on the token endpoint, and refuses assertions signed by another key', async () => {
    const device = await enrollTestDevice(t, t.tenants.a.admin);
    const assertion = await clientAssertion(device.key, device.id, device.tokenEndpoint);
    const noKey = await t.call('POST', '/api/v2/oauth/token', {
      body: {
        grant_type: 'client_credentials',
        client_assertion_type: JWT_BEARER_ASSERTION,
        client_assertion: assertion,
      },
    });
    expect(noKey.status).toBe(400);
    expect(noKey.body.error.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    const forged = await clientAssertion(await newDeviceKey(), device.id, device.tokenEndpoint);
    const r = await token({
      grant_type: 'client_credentials',
      client_assertion_type: JWT_BEARER_ASSERTION,
      client_assertion: forged,
    });
    expect(r.status).toBe(401);
    const wrongAud = await clientAssertion(device.key, device.id, 'https://elsewhere.example/token');
    expect(
      (
        await token({
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: wrongAud,
        })
      ).status,
    ).toBe(401);
    const grant = await token({ grant_type: 'password', username: 'x' });
    expect(grant.status).toBe(400);
    expect(grant.body.error.details.error).toBe('unsupported_grant_type');
  });

  it('accepts form-encoded requests and API clients with client id and secret (body or Basic)', async () => {
    const keys = await t.call('GET', '/api/v2/api-keys', { key: t.tenants.b.admin });
    const admin = keys.body.data.find((k: { name: string }) => k.name === 'admin');
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: admin.id,
      client_secret: t.tenants.b.admin,
      scope: 'keys:manage',
    });
    const r = await t.call('POST', '/api/v2/oauth/token', {
      headers: { 'Idempotency-Key': randomUUID(), 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(r.status).toBe(200);
    expect(r.body.scope).toBe('keys:manage');
    expect(decodeJwt(r.body.access_token).acl).toBeUndefined(); // an API client is no device
    const list = await t.call('GET', '/api/v2/api-keys', { key: r.body.access_token });
    expect(list.status).toBe(200);
    const basic = Buffer.from(`${admin.id}:${t.tenants.b.admin}`).toString('base64');
    const viaBasic = await token({ grant_type: 'client_credentials' }, { authorization: `Basic ${basic}` });
    expect(viaBasic.status).toBe(200);
    const wrong = await token({
      grant_type: 'client_credentials',
      client_id: admin.id,
      client_secret: 'dpp_sk_wrong',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBeUndefined();
  });

  it('revokes a device: its tokens stop working at once; a second revoke is 409 ALREADY_REVOKED', async () => {
    const device = await enrollTestDevice(t, t.tenants.a.admin);
    const access = await device.accessToken();
    expect((await t.call('GET', `/api/v2/devices/${device.id}`, { key: access })).status).toBe(200);
    const r = await t.call('POST', `/api/v2/devices/${device.id}/revoke`, { key: t.tenants.a.admin });
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('revoked');
    expect((await t.call('GET', `/api/v2/devices/${device.id}`, { key: access })).status).toBe(401);
    await expect(device.accessToken()).rejects.toThrow(/401/);
    const again = await t.call('POST', `/api/v2/devices/${device.id}/revoke`, { key: t.tenants.a.admin });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('ALREADY_REVOKED');
    expect(
      (await t.call('POST', `/api/v2/devices/${device.id}/revoke`, { key: t.tenants.b.admin })).status,
    ).toBe(404);
  });

  it('lets a device rotate its own key; afterwards only the new key signs assertions', async () => {
    const device = await enrollTestDevice(t, t.tenants.a.admin);
    const access = await device.accessToken();
    const next = await newDeviceKey();
    const proof = await keyRotationProof(next, device.id);
    const r = await t.call('POST', `/api/v2/devices/${device.id}/rotate-key`, {
      key: access,
      body: { publicKeyJwk: next.publicJwk, proof },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.keyRotatedAt).not.toBeNull();
    const old = await clientAssertion(device.key, device.id, device.tokenEndpoint);
    expect(
      (
        await token({
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: old,
        })
      ).status,
    ).toBe(401);
    const fresh = await clientAssertion(next, device.id, device.tokenEndpoint);
    expect(
      (
        await token({
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER_ASSERTION,
          client_assertion: fresh,
        })
      ).status,
    ).toBe(200);
    // An admin key cannot rotate a device key (it does not hold the device's private key): a device-only route.
    const byAdmin = await t.call('POST', `/api/v2/devices/${device.id}/rotate-key`, {
      key: t.tenants.a.admin,
      body: { publicKeyJwk: next.publicJwk, proof },
    });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.error).toMatchObject({
      code: 'API_SCOPE_DENIED',
      details: { required: 'aidc:device' },
    });
  });

  it('publishes its signing keys at /.well-known/jwks.json and keeps old keys there after rotation', async () => {
    const before = await t.call('GET', '/.well-known/jwks.json');
    expect(before.status).toBe(200);
    expect(before.body.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(before.body.keys[0].d).toBeUndefined();
    const device = await enrollTestDevice(t, t.tenants.a.admin);
    const access = await device.accessToken();
    const oldKid = decodeProtectedHeader(access).kid;
    const newKid = await t.cp.services.keyring.rotate();
    const after = await t.call('GET', '/.well-known/jwks.json');
    expect(after.body.keys.map((k: { kid: string }) => k.kid)).toEqual(
      expect.arrayContaining([oldKid, newKid]),
    );
    expect((await t.call('GET', `/api/v2/devices/${device.id}`, { key: access })).status).toBe(200);
    expect(decodeProtectedHeader(await device.accessToken()).kid).toBe(newKid);
  });
});
