/**
 * Test fixtures: a control-plane-like signer of AIDC envelopes with a JWKS served over real HTTP, and
 * envelope claims that agree with themselves (GTIN, serial, SGTIN-96, Digital Link). Test code only.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { AIDC_ENVELOPE_TYPE, buildDigitalLink, encodeSgtin96, type AidcEnvelopeClaims } from '@dpp/shared';

export const GTIN = '09506000134352';

export function claimsFor(serial: string, over: Partial<AidcEnvelopeClaims> = {}): AidcEnvelopeClaims {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: 'http://cp.test',
    aud: 'device-1',
    jti: randomUUID(),
    iat: now,
    exp: now + 120,
    job_ref: `job_${'0'.repeat(10)}${'a'.repeat(10)}`,
    attempt_id: randomUUID(),
    tenant_id: randomUUID(),
    printer: 'zebra-1',
    gtin: GTIN,
    serial,
    digital_link: buildDigitalLink('https://id.example.com', GTIN, serial),
    sgtin96_epc: encodeSgtin96({ gtin: GTIN, serial, companyPrefixLength: 7, filter: 1 }).hex,
    label_template: {
      id: 'default',
      widthMm: 50,
      heightMm: 30,
      dpi: 203,
      qrMagnification: 4,
      textLines: ['Demo product', `SN ${serial}`],
      rfid: true,
    },
    passport_version: {
      id: '0193a000-0000-7000-8000-000000000001',
      contentHash: 'c'.repeat(64),
      merkleRoot: 'd'.repeat(64),
    },
    lease_expires_at: new Date((now + 120) * 1000).toISOString(),
    ...over,
  };
}

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: 'EdDSA', use: 'sig' } };
}

/** A signer with its JWKS on a real HTTP server; `rotate()` adds a new key that signs from then on. */
export interface EnvelopeSigner {
  jwksUrl: string;
  /** How many times the JWKS was fetched. */
  readonly fetches: number;
  sign(claims: AidcEnvelopeClaims, header?: { typ?: string }): Promise<string>;
  /** Signs with a key that is not in the JWKS. */
  signWithStranger(claims: AidcEnvelopeClaims): Promise<string>;
  rotate(): Promise<void>;
  close(): Promise<void>;
}

export async function startEnvelopeSigner(): Promise<EnvelopeSigner> {
  const keys: SigningKey[] = [await newKey()];
  let fetches = 0;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const signWith = (k: SigningKey, claims: AidcEnvelopeClaims, typ = AIDC_ENVELOPE_TYPE) =>
    new SignJWT({ ...claims }).setProtectedHeader({ alg: 'EdDSA', typ, kid: k.kid }).sign(k.privateKey);
  return {
    jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    get fetches() {
      return fetches;
    },
    sign: (claims, header = {}) => signWith(keys[keys.length - 1]!, claims, header.typ),
    signWithStranger: async (claims) => signWith(await newKey(), claims),
    rotate: async () => {
      keys.push(await newKey());
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
