/**
 * A small control plane and print floor for tests, made exactly per docs/label-proof.md: Ed25519 keys made
 * with jose, a device statement, an evidence bundle, a seal receipt, an EPCIS event, a log of several leaves
 * with signed tree heads, and the routes a verifier fetches (linkset, proof, keys, tree head, consistency).
 */
import { calculateJwkThumbprint, CompactSign, exportJWK, generateKeyPair, type CryptoKey } from 'jose';
import { encodeSgtin96 } from '../../../shared/src/epc/index.js';
import { canonicalJson, sha256Hex } from '../jcs.js';
import { TYP } from '../jws.js';
import { auditPath, consistencyProof, mth } from './merkle-reference.js';

export interface KeyPair {
  kid: string;
  privateKey: CryptoKey;
  jwk: { kty: 'OKP'; crv: 'Ed25519'; x: string };
}

export async function keyPair(kid?: string): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const exported = await exportJWK(publicKey);
  const jwk = { kty: 'OKP' as const, crv: 'Ed25519' as const, x: exported.x! };
  return { kid: kid ?? (await calculateJwkThumbprint(jwk)), privateKey, jwk };
}

/** A compact JWS over the canonical JSON of `payload`. */
export async function sign(key: KeyPair, typ: string, payload: unknown): Promise<string> {
  return new CompactSign(new TextEncoder().encode(canonicalJson(payload)))
    .setProtectedHeader({ alg: 'EdDSA', typ, kid: key.kid })
    .sign(key.privateKey);
}

export const GTIN = '09506000134352';
export const SERIAL = '1001';
/** 7-digit company prefix: SGTIN urn:epc:id:sgtin:9506000.013435.1001. */
export const COMPANY_PREFIX_LENGTH = 7;

export const T = {
  retiredFrom: '2025-01-01T00:00:00.000Z',
  rotation: '2026-03-01T00:00:00.000Z',
  enrolled: '2025-06-01T00:00:00.000Z',
  sealed: '2026-04-01T10:00:00.000Z',
  issued: '2026-05-01T00:00:00.000Z',
};

const plusSeconds = (iso: string, s: number): string => new Date(Date.parse(iso) + s * 1000).toISOString();

export interface SealOptions {
  /** When the bundle and receipt were sealed; the head is signed a second later. */
  sealedAt?: string;
  /** The control-plane key that signs the receipt and the tree head. */
  signer?: 'current' | 'retired';
  epc?: boolean;
  revokedAt?: string | null;
  /** Filler leaves before and after the label's receipt in the log. */
  before?: number;
  after?: number;
  /** Edits of a payload before it is signed. */
  bundle?: (p: Record<string, unknown>) => void;
  receipt?: (p: Record<string, unknown>) => void;
  event?: (e: Record<string, unknown>) => void;
}

export class World {
  readonly issuer: string;
  readonly logUrl: string;
  readonly digitalLink: string;
  readonly proofUrl: string;
  /** The log's leaves, as the sequencer appended them. */
  leaves: Buffer[] = [];
  /** What the log route serves as its latest head (a size); defaults to the whole log. */
  latestSize: number | undefined;
  proof: Record<string, unknown> = {};
  /** Routes answer with these statuses instead (e.g. a resolver without linksets). */
  readonly status = new Map<string, number>();

  private constructor(
    readonly origin: string,
    readonly retired: KeyPair,
    readonly current: KeyPair,
    readonly device: KeyPair,
  ) {
    this.issuer = origin;
    this.logUrl = `${origin}/api/v2/public/log`;
    this.digitalLink = `${origin}/01/${GTIN}/21/${SERIAL}`;
    this.proofUrl = `${origin}/api/v2/public/labels/${GTIN}/${SERIAL}/proof`;
  }

  static async create(origin = 'https://dpp.example.com'): Promise<World> {
    return new World(origin, await keyPair('cp-2025'), await keyPair('cp-2026'), await keyPair());
  }

  keysDoc(): { keys: unknown[] } {
    return {
      keys: [
        {
          ...this.retired.jwk,
          kid: this.retired.kid,
          signingWindow: { from: T.retiredFrom, until: T.rotation },
        },
        { ...this.current.jwk, kid: this.current.kid, signingWindow: { from: T.rotation, until: null } },
      ],
    };
  }

  /** The signed tree head of the first `size` leaves of `leaves`. */
  async treeHead(
    size: number,
    at: string,
    signer: KeyPair = this.current,
    leaves = this.leaves,
  ): Promise<string> {
    return sign(signer, TYP.treeHead, {
      iss: this.issuer,
      log: this.logUrl,
      treeSize: size,
      rootHash: mth(leaves.slice(0, size)).toString('hex'),
      timestamp: at,
    });
  }

  /** Builds a one-seal proof of the label, appending its receipt to the log. */
  async seal(o: SealOptions = {}): Promise<Record<string, unknown>> {
    const sealedAt = o.sealedAt ?? T.sealed;
    const signer = o.signer === 'retired' ? this.retired : this.current;
    const epc = o.epc ?? true;
    const sgtin = encodeSgtin96({ gtin: GTIN, serial: SERIAL, companyPrefixLength: COMPANY_PREFIX_LENGTH });
    const statement = await sign(this.current, TYP.deviceStatement, {
      iss: this.issuer,
      deviceId: 'dev_1',
      tenantId: 'ten_1',
      site: 'plant-a',
      enrolledAt: T.enrolled,
      revokedAt: o.revokedAt ?? null,
      keys: [{ ...this.device.jwk, kid: this.device.kid, validFrom: T.enrolled, validUntil: null }],
      issuedAt: T.issued,
    });
    const passportVersion = { id: 'pv_1', contentHash: sha256Hex('content'), merkleRoot: sha256Hex('root') };
    const payloadSha256 = sha256Hex('^XA label ^XZ');
    const bundlePayload: Record<string, unknown> = {
      jobRef: 'pj_1',
      attemptId: 'att_1',
      deviceId: 'dev_1',
      envelopeJti: 'jti_1',
      passportVersion,
      renderManifest: {
        language: 'zpl',
        template: 'tpl_1',
        payloadSha256,
        payloadBytes: 1234,
        digitalLink: this.digitalLink,
        qrVerified: true,
        ...(epc ? { sgtin96Epc: sgtin.hex } : {}),
        renderedAt: plusSeconds(sealedAt, -30),
      },
      spoolReceipt: {
        printer: 'line-1',
        transport: 'tcp',
        bytes: 1234,
        payloadSha256,
        submittedAt: plusSeconds(sealedAt, -20),
      },
      attestation: {
        actor: { type: 'device', id: 'dev_1' },
        method: epc ? 'rfid_readback' : 'printer_status',
        ...(epc ? { epcReadBack: sgtin.hex } : {}),
        attestedAt: plusSeconds(sealedAt, -10),
      },
      scanResult: {
        scanner: 'scan-1',
        decodedLink: this.digitalLink,
        linkMatches: true,
        scannedAt: plusSeconds(sealedAt, -5),
      },
      sealedAt,
    };
    o.bundle?.(bundlePayload);
    const bundle = await sign(this.device, TYP.evidence, bundlePayload);
    const event: Record<string, unknown> = {
      type: 'ObjectEvent',
      eventTime: sealedAt,
      eventTimeZoneOffset: '+00:00',
      eventID: `urn:uuid:6f1c0d2e-0000-4000-8000-${'0'.repeat(11)}1`,
      epcList: [sgtin.pureIdentityUri],
      action: 'ADD',
      bizStep: 'commissioning',
      disposition: 'active',
      certificationInfo: this.proofUrl,
    };
    o.event?.(event);
    const receiptPayload: Record<string, unknown> = {
      iss: this.issuer,
      jobRef: 'pj_1',
      attemptId: 'att_1',
      deviceId: 'dev_1',
      gtin: GTIN,
      serial: SERIAL,
      digitalLink: this.digitalLink,
      passportVersionId: 'pv_1',
      bundleSha256: sha256Hex(bundle),
      epcisEvent: { eventId: event.eventID, sha256: sha256Hex(canonicalJson(event)) },
      sealedAt,
    };
    o.receipt?.(receiptPayload);
    const receipt = await sign(signer, TYP.sealReceipt, receiptPayload);
    for (let i = 0; i < (o.before ?? 5); i++)
      this.leaves.push(Buffer.from(`earlier receipt ${this.leaves.length}`));
    const leafIndex = this.leaves.length;
    this.leaves.push(Buffer.from(receipt, 'ascii'));
    const treeSize = this.leaves.length;
    const treeHead = await this.treeHead(treeSize, plusSeconds(sealedAt, 1), signer);
    for (let i = 0; i < (o.after ?? 3); i++)
      this.leaves.push(Buffer.from(`later receipt ${this.leaves.length}`));
    this.proof = {
      type: 'dpp-label-proof',
      version: 1,
      issuer: this.issuer,
      label: { gtin: GTIN, serial: SERIAL, digitalLink: this.digitalLink, status: 'sealed', voidedAt: null },
      seals: [
        {
          jobRef: 'pj_1',
          passportVersion,
          evidenceBundle: bundle,
          deviceStatement: statement,
          sealReceipt: receipt,
          epcisEvent: event,
          log: {
            leafIndex,
            treeSize,
            inclusionProof: auditPath(leafIndex, this.leaves.slice(0, treeSize)).map((h) =>
              h.toString('hex'),
            ),
            treeHead,
          },
        },
      ],
      links: {
        signingKeys: `${this.origin}/api/v2/public/signing-keys`,
        treeHead: `${this.logUrl}/tree-head`,
        consistency: `${this.logUrl}/consistency`,
      },
    };
    return this.proof;
  }

  /** The first seal of the proof, to edit in a test. */
  get firstSeal(): Record<string, unknown> & { log: Record<string, unknown> } {
    return (this.proof.seals as never[])[0]!;
  }

  /** What the control plane answers for a URL: `{ status, body }`. */
  async respond(url: string): Promise<{ status: number; body: unknown }> {
    const u = new URL(url);
    const forced = this.status.get(u.pathname);
    if (forced !== undefined) return { status: forced, body: { error: 'forced' } };
    if (u.pathname === `/01/${GTIN}/21/${SERIAL}`) {
      return {
        status: 200,
        body: {
          linkset: [
            {
              anchor: this.digitalLink,
              'https://gs1.org/voc/pip': [{ href: `${this.origin}/passports/p_1`, type: 'text/html' }],
              'https://gs1.org/voc/certificationInfo': [{ href: this.proofUrl, type: 'application/json' }],
            },
          ],
        },
      };
    }
    if (u.pathname === new URL(this.proofUrl).pathname) return { status: 200, body: this.proof };
    if (u.pathname === '/api/v2/public/signing-keys') return { status: 200, body: this.keysDoc() };
    const size = this.latestSize ?? this.leaves.length;
    if (u.pathname === '/api/v2/public/log/tree-head') {
      return { status: 200, body: { treeHead: await this.treeHead(size, T.issued) } };
    }
    if (u.pathname === '/api/v2/public/log/consistency') {
      const first = Number(u.searchParams.get('first'));
      const second = Number(u.searchParams.get('second'));
      const proof = consistencyProof(first, this.leaves.slice(0, second)).map((h) => h.toString('hex'));
      return { status: 200, body: { first, second, proof } };
    }
    return { status: 404, body: { error: 'not found' } };
  }

  /** A fetch that answers from `respond`, for tests that need no socket. */
  fetch = async (url: string): Promise<Response> => {
    const { status, body } = await this.respond(url);
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
}
