/**
 * Test data and HTTP steps for the passport journey (tests and benchmarks): products moved to
 * ready_for_dpp, generation, publication, registration, commands, and credentials signed with the W3C
 * vc-di-eddsa vector key under a did:key issuer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createProof,
  didKeyFromPublicKey,
  ed25519PrivateKeyFromSeed,
  ed25519RawPublicKey,
  multibaseBase58btcDecode,
  verificationMethodId,
} from '@dpp/shared';
import { type CallResult, createApiKey } from '@dpp/control-plane';
import type { TestControlPlane } from './index.js';
import { gtinFor, productBody } from './products.js';

export { gtinFor, productBody };

/** `../shared/vectors/` beside the repository, or DPP_VECTORS_DIR. */
export function vectorText(rel: string): string {
  const dir =
    process.env.DPP_VECTORS_DIR ?? fileURLToPath(new URL('../../../shared/vectors/', import.meta.url));
  return readFileSync(resolve(dir, rel), 'utf8');
}
export const vectorJson = <T = Record<string, unknown>>(rel: string): T => JSON.parse(vectorText(rel)) as T;

/** The W3C vc-di-eddsa key pair: its 32-byte seed and its did:key. */
export function vectorKey(): { seed: Uint8Array; did: string } {
  const pair = vectorJson<{ privateKeyMultibase: string }>('vc-di-eddsa/keyPair.json');
  const seed = multibaseBase58btcDecode(pair.privateKeyMultibase).slice(2); // multicodec ed25519-priv 0x1300
  return { seed, did: didKeyFromPublicKey(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed))) };
}

/** The vector's unsigned credential, re-issued by the vector key's did:key and signed with it. */
export function signedCredential(
  overrides: Record<string, unknown> = {},
  key = vectorKey(),
): Record<string, unknown> {
  const unsigned = { ...vectorJson('vc-di-eddsa/unsigned.json'), issuer: key.did, ...overrides };
  return createProof(unsigned, {
    privateKey: key.seed,
    verificationMethod: verificationMethodId(key.did),
    created: '2024-05-01T10:00:00Z',
  });
}

/** A fresh Ed25519 did:key. */
export function randomKey(): { seed: Uint8Array; did: string } {
  const seed = new Uint8Array(randomBytes(32));
  return { seed, did: didKeyFromPublicKey(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed))) };
}

/** An API key of tenant a with exactly these scopes (keys are made in the browser; tests make them here). */
export async function keyWith(
  t: TestControlPlane,
  scopes: string[],
  tenantId = t.tenants.a.id,
): Promise<string> {
  const key = await createApiKey(
    t.cp.store.db,
    { tenantId, name: scopes.join(' '), scopes },
    { actor: { type: 'system', id: null } },
  );
  return key.secret;
}

function expectStatus(r: CallResult, status: number, what: string): CallResult {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text}`);
  return r;
}

/** Creates a product and moves it through validated to ready_for_dpp; returns its id and the create body. */
export async function readyProduct(
  t: TestControlPlane,
  key: string,
  n: number,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; body: Record<string, unknown> }> {
  const body = productBody(n, overrides);
  const created = expectStatus(
    await t.call('POST', '/api/v2/products', { key, body }),
    201,
    'create product',
  );
  const id = created.body.id as string;
  for (const stage of ['validated', 'ready_for_dpp']) {
    expectStatus(
      await t.call('POST', `/api/v2/products/${id}/lifecycle/transition`, { key, body: { stage } }),
      200,
      `move to ${stage}`,
    );
  }
  return { id, body };
}

/** POST /dpp/generate, waiting (Prefer: wait) for the end: the final answer. */
export function generate(
  t: TestControlPlane,
  key: string,
  productId: string,
  extra: Record<string, unknown> = {},
): Promise<CallResult> {
  return t.call('POST', '/api/v2/dpp/generate', {
    key,
    body: { productId, ...extra },
    headers: { Prefer: 'wait=20' },
  });
}

export async function generated(t: TestControlPlane, key: string, productId: string): Promise<CallResult> {
  return expectStatus(await generate(t, key, productId), 200, 'generate');
}

export function publish(
  t: TestControlPlane,
  key: string,
  productId: string,
  body: Record<string, unknown> = {},
): Promise<CallResult> {
  return t.call('POST', `/api/v2/dpp/${productId}/publish`, {
    key,
    body: { amendmentReason: 'First publication of the passport', ...body },
  });
}

export function register(
  t: TestControlPlane,
  key: string,
  productId: string,
  body: Record<string, unknown> = {},
): Promise<CallResult> {
  return t.call('POST', `/api/v2/products/${productId}/publish-dpp`, {
    key,
    body,
    headers: { 'Idempotency-Key': randomUUID() },
  });
}

/** The documented journey: ready_for_dpp, generate, publish, and (unless told not to) publish-dpp. */
export async function livePassport(
  t: TestControlPlane,
  key: string,
  n: number,
  opts: { overrides?: Record<string, unknown>; register?: boolean; publish?: Record<string, unknown> } = {},
): Promise<{ id: string; body: Record<string, unknown> }> {
  const p = await readyProduct(t, key, n, opts.overrides);
  await generated(t, key, p.id);
  expectStatus(await publish(t, key, p.id, opts.publish), 201, 'publish');
  if (opts.register !== false) expectStatus(await register(t, key, p.id), 201, 'publish-dpp');
  return p;
}

/** A complete command envelope. */
export function envelope(
  tenantId: string,
  type: string,
  payload: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    type,
    tenantId,
    idempotencyKey: randomUUID(),
    actorId: randomUUID(),
    correlationId: randomUUID(),
    requestedAt: new Date().toISOString(),
    payload,
    ...extra,
  };
}

export function sendCommand(
  t: TestControlPlane,
  key: string,
  body: unknown,
  headerKey: string = randomUUID(),
): Promise<CallResult> {
  return t.call('POST', '/api/v2/passports/commands', {
    key,
    body,
    headers: { 'Idempotency-Key': headerKey },
  });
}

/** Sends PASSPORT.<name> for a passport of tenant a; payload fields beyond passportId as given. */
export function command(
  t: TestControlPlane,
  passportId: string,
  name: string,
  payload: Record<string, unknown> = {},
  key = t.tenants.a.admin,
): Promise<CallResult> {
  return sendCommand(t, key, envelope(t.tenants.a.id, `PASSPORT.${name}`, { passportId, ...payload }));
}
