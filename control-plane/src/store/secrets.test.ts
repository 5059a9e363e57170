import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '@dpp/shared';
import {
  enrollTestDevice,
  openTestStore,
  printableProduct,
  startTestControlPlane,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';
import { emitEvent } from '@dpp/testkit/webhooks';
import { startReceiver } from '@dpp/testkit/webhooks';
import { SecretBox, sealStoredSecrets, secretContext } from './secrets.js';

const key = randomBytes(32);

describe('SecretBox', () => {
  const box = SecretBox.of(key);

  it('seals to enc:v1: and opens back; each seal is different', () => {
    const a = box.seal('whsec_abc', 'webhook_endpoints.secret:1');
    const b = box.seal('whsec_abc', 'webhook_endpoints.secret:1');
    expect(a).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(box.open(a, 'webhook_endpoints.secret:1')).toBe('whsec_abc');
    expect(box.open(b, 'webhook_endpoints.secret:1')).toBe('whsec_abc');
  });

  it("refuses another row's value, another key, a damaged value, and a sealed value without a key", () => {
    const sealed = box.seal('whsec_abc', 'webhook_endpoints.secret:1');
    expect(() => box.open(sealed, 'webhook_endpoints.secret:2')).toThrow(/does not open/);
    expect(() => SecretBox.of(randomBytes(32)).open(sealed, 'webhook_endpoints.secret:1')).toThrow(
      /does not open/,
    );
    // a character in the middle: every bit of it is ciphertext or tag (the last one may carry padding bits)
    const i = Math.floor(sealed.length / 2);
    const damaged = `${sealed.slice(0, i)}${sealed[i] === 'A' ? 'B' : 'A'}${sealed.slice(i + 1)}`;
    expect(damaged).not.toBe(sealed);
    expect(() => box.open(damaged, 'webhook_endpoints.secret:1')).toThrow(/does not open/);
    expect(() => SecretBox.of(undefined).open(sealed, 'webhook_endpoints.secret:1')).toThrow(
      'webhook_endpoints.secret:1 is sealed, but SECRETS_KEY is not set',
    );
  });

  it('after a rotation opens values of the previous key too, says they are stale, and seals with the new one', () => {
    const previous = randomBytes(32);
    const old = SecretBox.of(previous).seal('whsec_abc', 'c');
    const rotated = SecretBox.of(key, previous);
    expect(rotated.read(old, 'c')).toEqual({ plain: 'whsec_abc', stale: true });
    const resealed = rotated.seal('whsec_abc', 'c');
    expect(rotated.read(resealed, 'c')).toEqual({ plain: 'whsec_abc', stale: false });
    expect(box.open(resealed, 'c')).toBe('whsec_abc');
    expect(() => box.open(old, 'c')).toThrow(/does not open/); // the new key alone
    expect(() => SecretBox.of(undefined, previous)).toThrow(/needs a current one/);
  });

  it('without a key stores values as they are; with one, still reads plain values of old rows', () => {
    expect(SecretBox.of(undefined).seal('whsec_abc', 'x')).toBe('whsec_abc');
    expect(box.open('whsec_abc', 'x')).toBe('whsec_abc');
    expect(() => SecretBox.of(randomBytes(16))).toThrow('32 bytes');
  });
});

describe.each(testDialects())('sealing the secrets of rows stored before the key (%s)', (dialect) => {
  let store: Awaited<ReturnType<typeof openTestStore>>;
  beforeEach(async () => {
    store = await openTestStore(dialect);
  });
  afterEach(() => store.drop());

  it('seals plain signing keys once and leaves sealed ones alone; a second run seals nothing', async () => {
    const at = new Date().toISOString();
    await store.db
      .insertInto('signing_keys')
      .values([
        {
          kid: 'k1',
          alg: 'EdDSA',
          private_jwk: '{"d":"one"}',
          public_jwk: '{}',
          created_at: at,
          retired_at: null,
        },
        {
          kid: 'k2',
          alg: 'EdDSA',
          private_jwk: SecretBox.of(key).seal('{"d":"two"}', secretContext.signingKey('k2')),
          public_jwk: '{}',
          created_at: at,
          retired_at: null,
        },
      ])
      .execute();
    const box = SecretBox.of(key);
    expect(await sealStoredSecrets(store.db, SecretBox.of(undefined))).toBe(0);
    expect(await sealStoredSecrets(store.db, box)).toBe(1);
    expect(await sealStoredSecrets(store.db, box)).toBe(0);
    const rows = await store.db.selectFrom('signing_keys').selectAll().orderBy('kid').execute();
    expect(rows.map((r) => SecretBox.isSealed(r.private_jwk))).toEqual([true, true]);
    expect(rows.map((r) => box.open(r.private_jwk, secretContext.signingKey(r.kid)))).toEqual([
      '{"d":"one"}',
      '{"d":"two"}',
    ]);

    // A rotation: the next start has a new key and this one as the previous; every row moves to the new key.
    const next = randomBytes(32);
    const rotated = SecretBox.of(next, key);
    expect(await sealStoredSecrets(store.db, rotated)).toBe(2);
    expect(await sealStoredSecrets(store.db, rotated)).toBe(0);
    const after = await store.db.selectFrom('signing_keys').selectAll().orderBy('kid').execute();
    expect(after.map((r) => SecretBox.of(next).open(r.private_jwk, secretContext.signingKey(r.kid)))).toEqual(
      ['{"d":"one"}', '{"d":"two"}'],
    );
  });
});

describe.each(testDialects())('a control plane with SECRETS_KEY (%s)', (dialect) => {
  let t: TestControlPlane;
  const box = SecretBox.of(key);
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, env: { SECRETS_KEY: key.toString('base64') } });
  });
  afterAll(() => t?.close());

  it('keeps webhook secrets, signing keys and issuer keys sealed, and works with them', async () => {
    const admin = t.tenants.a.admin;
    // Webhooks: the secret answered once is what signs, while the row holds it sealed.
    const rx = await startReceiver();
    try {
      const create = () =>
        t.call('POST', '/api/v2/webhooks', {
          key: admin,
          headers: { 'Idempotency-Key': idempotencyKey },
          body: { url: `${rx.url}/hooks`, events: ['product.created'] },
        });
      const idempotencyKey = randomUUID();
      const created = await create();
      expect(created.status).toBe(201);
      const { id, secret } = created.body.data as { id: string; secret: string };
      // The answer kept for a repeat (it shows the secret) is sealed too, and the repeat gets it back.
      const again = await create();
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.data).toMatchObject({ id, secret });
      const kept = await t.cp.store.db
        .selectFrom('idempotency_keys')
        .select('response_body')
        .where('key', '=', idempotencyKey)
        .executeTakeFirstOrThrow();
      expect(kept.response_body).toMatch(/^enc:v1:/);
      expect(kept.response_body).not.toContain(secret);
      const row = await t.cp.store.db
        .selectFrom('webhook_endpoints')
        .select('secret')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(row.secret).toMatch(/^enc:v1:/);
      expect(box.open(row.secret, secretContext.webhookSecret(id))).toBe(secret);
      await emitEvent(t, t.tenants.a.id, 'product.created', { id: 'p-1' });
      const [req] = await rx.waitFor(1);
      expect(verifyWebhook(req!.body, req!.headers, secret, { toleranceSeconds: 300 }).type).toBe(
        'product.created',
      );
    } finally {
      await rx.close();
    }

    // Signing keys: a device enrolls and gets an access token signed by a key stored sealed.
    const device = await enrollTestDevice(t, admin, { name: 'sealed' });
    expect(await device.accessToken()).toMatch(/^ey/);
    const keys = await t.cp.store.db.selectFrom('signing_keys').select('private_jwk').execute();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => SecretBox.isSealed(k.private_jwk))).toBe(true);

    // Issuer keys: passports are issued with the tenant's key, stored sealed.
    await printableProduct(t.call, admin, 1);
    const seeds = await t.cp.store.db.selectFrom('passport_issuer_keys').select('private_seed').execute();
    expect(seeds.length).toBeGreaterThan(0);
    expect(seeds.every((s) => SecretBox.isSealed(s.private_seed))).toBe(true);

    // After a restart (same storage, same key) the sealed keys load and still sign.
    await t.restart();
    expect(await device.accessToken()).toMatch(/^ey/);
  });
});
