/** How passport records are shown on the authenticated routes. */
import type { PassportTable, PassportVersionTable } from '../store/index.js';
import { HASH_ALGORITHM } from './chain.js';
import { MERKLE_ALGORITHM } from './merkle.js';
import { publicStatus, type PublicStatus } from './model.js';
import { parseSections, parseTiers } from './queries.js';

/** One entry of the version chain: everything needed to re-verify it (chain.ts). */
export function versionView(row: PassportVersionTable, currentVersion: number) {
  return {
    versionId: row.id,
    version: row.version,
    previous_version_id: row.previous_version_id,
    previousHash: row.previous_hash,
    current: row.version === currentVersion,
    hash: row.hash,
    contentHash: row.content_hash,
    merkleRoot: row.merkle_root,
    amendmentReason: row.amendment_reason,
    publishedAt: row.published_at,
    content: parseSections(row.content),
    disclosure: parseTiers(row.section_tiers),
  };
}

export const CHAIN_ALGORITHMS = { hash: HASH_ALGORITHM, merkle: MERKLE_ALGORITHM };

/** What the public route would answer for a passport, in words. */
export function publicAnswer(s: PublicStatus) {
  switch (s.kind) {
    case 'live':
    case 'shown':
      return { status: 200, printable: s.kind === 'live' };
    case 'hidden':
      return { status: 404, code: 'PASSPORT_NOT_FOUND', reason: s.why, printable: false };
    case 'gone':
      return { status: 410, code: 'PASSPORT_GONE', goneReason: s.reason, printable: false };
  }
}

/** GET /passports/{id}: the passport's state and pointers. */
export function passportSummary(
  p: PassportTable,
  product: { voided_at: string | null; granularity: string },
  extra: { validations: number; digitalLink: string | null },
) {
  const status = publicStatus({
    currentVersion: p.current_version,
    state: p.state,
    disclosureTier: p.disclosure_tier,
    productVoided: product.voided_at !== null,
    granularity: product.granularity,
  });
  return {
    passportUid: p.product_id,
    state: p.state,
    disclosureTier: p.disclosure_tier,
    stateChangedAt: p.state_changed_at,
    generatedAt: p.generated_at,
    generationRequestId: p.generation_request_id,
    currentVersion: p.current_version,
    currentVersionId: p.current_version_id,
    currentHash: p.current_hash,
    firstPublishedAt: p.first_published_at,
    successorId: p.successor_id,
    sections: Object.keys(parseSections(p.content)).sort(),
    validations: extra.validations,
    registered: extra.digitalLink !== null,
    digitalLink: extra.digitalLink,
    publicRoute: publicAnswer(status),
    readyToPrint: extra.validations > 0 && status.kind === 'live',
    links: {
      history: `/api/v2/passports/${p.product_id}/history`,
      validations: `/api/v2/passports/${p.product_id}/validations`,
      public: `/api/v2/public/passport/${p.product_id}`,
      page: `/p/${p.product_id}`,
    },
  };
}
