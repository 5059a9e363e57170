import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import {
  computeGs1CheckDigit,
  createProof,
  didKeyFromPublicKey,
  ed25519PrivateKeyFromSeed,
  ed25519RawPublicKey,
  verificationMethodId,
} from '@dpp/shared';

export interface CallOptions {
  key?: string | undefined;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/** Any way of calling the API: a test harness's `call`, or fetch against a running control plane. */
export type ApiCaller = (method: string, path: string, opts?: CallOptions) => Promise<CallResult>;

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

function connectionReset(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | null;
  const code = e?.code ?? e?.cause?.code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET';
}

/** How a call goes on the wire and what came back: fetch, unless the caller brings another client. */
export type HttpTransport = (
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
) => Promise<{ status: number; headers: Headers; text: string }>;

const fetchTransport: HttpTransport = async (method, url, headers, body) => {
  const res = await fetch(url, { method, headers, body, redirect: 'manual' });
  return { status: res.status, headers: res.headers, text: await res.text() };
};

/**
 * A transport over node:http on kept-alive connections: less work a call than fetch's, for a client that calls a
 * lot (the benchmarks' simulated devices; fetch was 44 % of their thread, docs/benchmarks.md round 13).
 */
export function keepAliveTransport(agent = new http.Agent({ keepAlive: true })): HttpTransport {
  return (method, url, headers, body) =>
    new Promise((resolve, reject) => {
      const sent =
        body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
      const req = http.request(url, { method, headers: sent, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('error', reject);
        res.once('end', () => {
          const answered = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
              answered.append(name, v);
          }
          resolve({
            status: res.statusCode!,
            headers: answered,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      });
      req.once('error', reject);
      req.end(body);
    });
}

/** `call` for a control plane at `baseUrl` (the shape of TestControlPlane.call), over `transport`. */
export function httpCaller(baseUrl: string, transport: HttpTransport = fetchTransport): ApiCaller {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const send = () => transport(method, baseUrl + path, headers, body);
    let res: Awaited<ReturnType<HttpTransport>>;
    try {
      res = await send();
    } catch (err) {
      // A kept-alive connection the server closed as this request went out: the request was not answered.
      // Sent again once when that is safe: a method that is idempotent, or a request with an Idempotency-Key.
      if (!connectionReset(err) || !(IDEMPOTENT.has(method) || headers['Idempotency-Key'])) throw err;
      res = await send();
    }
    const { text } = res;
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
}

let nextItem = randomBytes(2).readUInt16BE() % 90_000;

/** A fresh valid GTIN-14 under the example company prefix 0950600. */
export function freshGtin(): string {
  nextItem = (nextItem + 1) % 100_000;
  const body = `10950600${String(nextItem).padStart(5, '0')}`;
  return body + String(computeGs1CheckDigit(body));
}

async function expectStatus(p: Promise<CallResult>, status: number, step: string): Promise<CallResult> {
  const r = await p;
  if (r.status !== status)
    throw new Error(`${step}: expected ${status}, got ${r.status} ${r.text.slice(0, 500)}`);
  return r;
}

/** A validation-result credential from a fresh did:key issuer, signed with eddsa-jcs-2022. */
export function validationCredential(subject: string): Record<string, unknown> {
  const seed = new Uint8Array(randomBytes(32));
  const did = didKeyFromPublicKey(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed)));
  return createProof(
    {
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      id: `urn:uuid:${randomUUID()}`,
      type: ['VerifiableCredential'],
      issuer: did,
      validFrom: '2026-01-01T00:00:00Z',
      credentialSubject: { id: subject, validation: 'passed' },
    },
    { privateKey: seed, verificationMethod: verificationMethodId(did) },
  );
}

export interface PrintableProduct {
  productId: string;
  gtin: string;
  serials: string[];
}

/**
 * A POST /api/v2/products body the shipped electronics schema accepts: a repairable phone with a fresh GTIN.
 * `overrides` replace top-level fields.
 */
export function demoProductBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Label Loop Phone',
    description: 'A repairable phone whose labels go through the device agent',
    category: 'electronics',
    gtin: freshGtin(),
    serialNumber: '1',
    extensions: {
      energyEfficiencyClass: 'A',
      annualEnergyConsumptionKwh: 12,
      repairabilityScore: 7,
      weeeCategory: 'small_it_telecom',
    },
    ...overrides,
  };
}

/**
 * The integrator's journey to printable labels, over HTTP: an electronics product taken to ready_for_dpp,
 * its passport generated, published and registered (publish-dpp), a validation anchored (readyToPrint),
 * and `count` serials allocated. Throws naming the step that failed.
 */
export async function printableProduct(
  call: ApiCaller,
  key: string,
  count: number,
  opts: { name?: string } = {},
): Promise<PrintableProduct> {
  const created = await expectStatus(
    call('POST', '/api/v2/products', { key, body: demoProductBody(opts.name ? { name: opts.name } : {}) }),
    201,
    'create product',
  );
  const productId = created.body.id as string;
  for (const stage of ['validated', 'ready_for_dpp']) {
    await expectStatus(
      call('POST', `/api/v2/products/${productId}/lifecycle/transition`, { key, body: { stage } }),
      200,
      `lifecycle ${stage}`,
    );
  }
  await expectStatus(
    call('POST', '/api/v2/dpp/generate', { key, body: { productId }, headers: { Prefer: 'wait=20' } }),
    200,
    'generate',
  );
  await expectStatus(
    call('POST', `/api/v2/dpp/${productId}/publish`, {
      key,
      body: { amendmentReason: 'First publication for the print loop' },
    }),
    201,
    'publish',
  );
  await expectStatus(
    call('POST', `/api/v2/products/${productId}/publish-dpp`, {
      key,
      body: {},
      headers: { 'Idempotency-Key': randomUUID() },
    }),
    201,
    'publish-dpp',
  );
  await expectStatus(
    call('POST', `/api/v2/passports/${productId}/validations`, {
      key,
      body: { vc: validationCredential(`urn:dpp:product:${productId}`) },
    }),
    201,
    'validation',
  );
  const batch = await expectStatus(
    call('POST', '/api/v2/carriers/batch', { key, body: { productId, count } }),
    201,
    'carriers',
  );
  return { productId, gtin: batch.body.gtin as string, serials: batch.body.serials as string[] };
}
