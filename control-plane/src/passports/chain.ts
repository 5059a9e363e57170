/**
 * The version hash chain. Every published version commits to its content and to the version before it,
 * so anyone holding GET /passports/{id}/history can re-verify the whole chain:
 *
 *   contentHash = SHA-256(RFC 8785 canonical JSON of the version's content)
 *   merkleRoot  = the RFC 6962 root over the content's sections (merkle.ts)
 *   hash        = SHA-256(RFC 8785 canonical JSON of {
 *                   passportUid, version, versionId, previous_version_id, previousHash,
 *                   contentHash, merkleRoot, amendmentReason, publishedAt })
 *
 * Version 1 has previous_version_id and previousHash null; version N+1 carries the id and hash of N.
 * Hashes are lower-case hex.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '@dpp/shared';

export const HASH_ALGORITHM = 'SHA-256 over RFC 8785 canonical JSON';

export interface ChainLink {
  passportUid: string;
  version: number;
  versionId: string;
  previous_version_id: string | null;
  previousHash: string | null;
  contentHash: string;
  merkleRoot: string;
  amendmentReason: string;
  publishedAt: string;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function contentHash(content: unknown): string {
  return sha256Hex(canonicalJson(content));
}

/** The hash of one version from its chain fields. */
export function versionHash(link: ChainLink): string {
  return sha256Hex(
    canonicalJson({
      passportUid: link.passportUid,
      version: link.version,
      versionId: link.versionId,
      previous_version_id: link.previous_version_id,
      previousHash: link.previousHash,
      contentHash: link.contentHash,
      merkleRoot: link.merkleRoot,
      amendmentReason: link.amendmentReason,
      publishedAt: link.publishedAt,
    }),
  );
}
