/**
 * What the public sees of a passport: GET /api/v2/public/passport/{uid}, the JSON of /p/{uid}, and the
 * answers for passports that are not served (404 PASSPORT_NOT_FOUND, 410 PASSPORT_GONE with its headers).
 */
import { BoundedMap, buildDigitalLink } from '@dpp/shared';
import { ApiError } from '../http/index.js';
import {
  parseSections,
  parseTiers,
  sectionProof,
  sectionTier,
  MERKLE_ALGORITHM,
  HASH_ALGORITHM,
} from '../passports/index.js';
import type { Db } from '../store/index.js';
import { publicMarketStatus, type Candidate, type ItemCandidate } from './lookup.js';

export interface PublicPassport {
  passportUid: string;
  state: string;
  notice: string | null;
  publisher: { name: string; issuer: string | null };
  digitalLink: string;
  registered: boolean;
  version: {
    version: number;
    versionId: string;
    previous_version_id: string | null;
    publishedAt: string;
    hash: string;
    contentHash: string;
    merkleRoot: string;
  };
  sections: Record<string, unknown>;
  proofs: Record<
    string,
    { leafIndex: number; leafCount: number; path: { side: 'left' | 'right'; hash: string }[] }
  >;
  disclosure: { tier: 'public'; withheldSections: number };
  algorithms: { hash: string; merkle: string };
  links: { self: string; page: string; digitalLink: string };
  /** The item's market status as its publisher recorded it; null when none was. */
  marketStatus: { status: string; since: string; reason: string | null } | null;
}

const NOTICES: Readonly<Record<string, string>> = {
  suspended: 'This passport is suspended by its publisher; the information may be under review.',
  archived: 'This passport is archived: the product is no longer placed on the market.',
};

type VersionPart = Pick<PublicPassport, 'version' | 'sections' | 'proofs' | 'disclosure'>;

/** A version's public parts, and their members as JSON bytes (`"version":…,"disclosure":…`, no braces). */
interface KeptPart {
  part: VersionPart;
  bytes: Buffer;
}

/** Public parts of published versions by version id. Versions are immutable, so entries never go stale. */
const VERSION_CACHE_SIZE = 2_000;
const versionParts = new BoundedMap<string, KeptPart>(VERSION_CACHE_SIZE);

async function publicPartsOf(db: Db, versionId: string): Promise<KeptPart> {
  const hit = versionParts.get(versionId);
  if (hit) {
    versionParts.delete(versionId);
    versionParts.set(versionId, hit);
    return hit;
  }
  const version = await db
    .selectFrom('passport_versions')
    .selectAll()
    .where('id', '=', versionId)
    .executeTakeFirstOrThrow();
  const content = parseSections(version.content);
  const tiers = parseTiers(version.section_tiers);
  const names = Object.keys(content).sort();
  const shown = names.filter((n) => sectionTier(tiers, n) === 'public');
  const sections: Record<string, unknown> = {};
  const proofs: PublicPassport['proofs'] = {};
  for (const name of shown) {
    sections[name] = content[name];
    const p = sectionProof(content, name)!;
    proofs[name] = { leafIndex: p.leafIndex, leafCount: p.leafCount, path: p.path };
  }
  const part: VersionPart = {
    version: {
      version: version.version,
      versionId: version.id,
      previous_version_id: version.previous_version_id,
      publishedAt: version.published_at,
      hash: version.hash,
      contentHash: version.content_hash,
      merkleRoot: version.merkle_root,
    },
    sections,
    proofs,
    disclosure: { tier: 'public', withheldSections: names.length - shown.length },
  };
  const kept = { part, bytes: Buffer.from(JSON.stringify(part).slice(1, -1)) };
  versionParts.set(versionId, kept);
  return kept;
}

/** What a public passport shows besides its version's parts: before them, and after them. */
async function passportFields(db: Db, c: Candidate, publicBaseUrl: string) {
  const digitalLink = c.digitalLink ?? buildDigitalLink(publicBaseUrl, c.gtin, c.serial);
  const marketStatus =
    c.marketStatus === undefined ? await publicMarketStatus(db, c.productId) : c.marketStatus;
  const before = {
    passportUid: c.productId,
    state: c.state ?? 'draft',
    notice: NOTICES[c.state ?? ''] ?? null,
    publisher: { name: c.tenantName, issuer: c.issuerDid },
    digitalLink,
    registered: c.registered,
  };
  const after = {
    algorithms: { hash: HASH_ALGORITHM, merkle: MERKLE_ALGORITHM },
    links: { self: `/api/v2/public/passport/${c.productId}`, page: `/p/${c.productId}`, digitalLink },
    marketStatus,
  };
  return { before, after };
}

/** The public passport of a served candidate: public sections only, each with its Merkle proof. */
export async function publicPassport(db: Db, c: Candidate, publicBaseUrl: string): Promise<PublicPassport> {
  const { part } = await publicPartsOf(db, c.currentVersionId!);
  const { before, after } = await passportFields(db, c, publicBaseUrl);
  return { ...before, ...part, ...after };
}

/**
 * The public passport as UTF-8 JSON: the bytes of the text JSON.stringify gives `publicPassport`, with its
 * version's parts (most of it: sections and proofs) serialised and encoded once per version instead of on
 * every read (the parts join at ASCII commas, so encoding them apart gives the same bytes).
 */
export async function publicPassportBytes(db: Db, c: Candidate, publicBaseUrl: string): Promise<Buffer> {
  const { bytes } = await publicPartsOf(db, c.currentVersionId!);
  const { before, after } = await passportFields(db, c, publicBaseUrl);
  return Buffer.concat([
    Buffer.from(`${JSON.stringify(before).slice(0, -1)},`),
    bytes,
    Buffer.from(`,${JSON.stringify(after).slice(1)}`),
  ]);
}

/** The route of a label's proof (docs/label-proof.md), the serial URL-encoded. */
export function labelProofPath(gtin: string, serial: string): string {
  return `/api/v2/public/labels/${gtin}/${encodeURIComponent(serial)}/proof`;
}

/** `Link: <...>; rel="successor-version"` when a replacement was recorded (api-v2.md, PASSPORT_GONE). */
export function successorLink(
  successorId: string | null,
  base: '/api/v2/public/passport/' | '/p/',
): Record<string, string> {
  return successorId ? { Link: `<${base}${successorId}>; rel="successor-version"` } : {};
}

/**
 * The error for a candidate the public route does not serve: 410 PASSPORT_GONE (X-DPP-Gone-Reason
 * serial_voided or passport_voided, none for a ceased item; Link to the successor when recorded), or
 * 404 PASSPORT_NOT_FOUND.
 */
export function notServedError(
  c: ItemCandidate | undefined,
  base: '/api/v2/public/passport/' | '/p/',
): ApiError {
  if (c && c.status.kind === 'gone') {
    const reason = c.status.reason;
    return new ApiError(
      'PASSPORT_GONE',
      reason
        ? `This passport is no longer available (${reason.replace('_', ' ')})`
        : 'This item has ceased to exist',
      {
        details: {
          passportUid: c.productId,
          ...(reason ? { reason } : {}),
          ...(c.successorId ? { successorId: c.successorId } : {}),
        },
        headers: {
          ...(reason ? { 'X-DPP-Gone-Reason': reason } : {}),
          ...successorLink(c.successorId, base),
        },
      },
    );
  }
  // The same answer for a draft, a passport not published to the public and an unknown id.
  return new ApiError('PASSPORT_NOT_FOUND', 'No passport is published under this id');
}
