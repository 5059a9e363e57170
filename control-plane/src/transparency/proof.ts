/**
 * The proof of one label (docs/label-proof.md): every seal of it with the device's evidence bundle, the
 * control plane's statement about the device, the seal receipt, the commissioning event and the receipt's
 * place in the transparency log under the newest signed tree head.
 */
import { LABEL_PROOF_TYPE, type LabelProof, digitalLinkPath } from '@dpp/shared';
import { signedDeviceStatement, type StatementDeps } from '../devices/index.js';
import { ApiError } from '../http/index.js';
import { resolveKey } from '../public/index.js';
import type { Db } from '../store/index.js';
import { type TransparencyLog, logUrl } from './log.js';

export interface ProofDeps extends StatementDeps {
  db: Db;
  log: TransparencyLog;
}

const notFound = () =>
  new ApiError('LABEL_PROOF_NOT_FOUND', 'No label with this GTIN and serial was sealed and published');

export async function labelProof(deps: ProofDeps, gtin: string, serial: string): Promise<LabelProof> {
  const { db, issuer } = deps;
  // Only for a passport the public may see (or a voided one, whose proof says so): never more than it shows.
  const resolution = await resolveKey(db, gtin, serial, { requireRegistered: false });
  if (resolution.kind === 'ambiguous') {
    throw new ApiError('PASSPORT_AMBIGUOUS', 'This GTIN and serial name labels of more than one publisher');
  }
  if (resolution.kind !== 'one' && resolution.kind !== 'voided') throw notFound();
  const { candidate } = resolution;
  const rows = await db
    .selectFrom('seal_receipts as sr')
    .innerJoin('print_jobs as j', 'j.job_ref', 'sr.job_ref')
    .innerJoin('print_evidence as e', (join) =>
      join.onRef('e.attempt_id', '=', 'j.attempt_id').on('e.kind', '=', 'evidence_bundle'),
    )
    .innerJoin('print_attempts as a', 'a.attempt_id', 'j.attempt_id')
    .leftJoin('passport_versions as pv', 'pv.id', 'a.passport_version_id')
    .leftJoin('epcis_events as ev', (join) =>
      join.onRef('ev.tenant_id', '=', 'sr.tenant_id').onRef('ev.event_id', '=', 'sr.epcis_event_id'),
    )
    .select([
      'sr.job_ref',
      'sr.receipt',
      'sr.leaf_index',
      'j.device_id',
      'j.digital_link',
      'e.payload as bundle',
      'pv.id as version_id',
      'pv.content_hash',
      'pv.merkle_root',
      'ev.document as event',
    ])
    .where('sr.tenant_id', '=', candidate.tenantId)
    .where('sr.gtin', '=', gtin)
    .where('sr.serial', '=', serial)
    .orderBy('sr.sealed_at')
    .orderBy('sr.job_ref')
    .execute();
  if (rows.length === 0) throw notFound();
  const head = await deps.log.latestHead();
  const seals = [];
  // One statement per device, however many of the label's seals it made.
  const statements = new Map<string, Promise<string | null>>();
  for (const r of rows) {
    const deviceId = r.device_id!;
    if (!statements.has(deviceId)) statements.set(deviceId, signedDeviceStatement(deps, deviceId));
    const statement = await statements.get(deviceId)!;
    const logged = head && r.leaf_index !== null && r.leaf_index < head.tree_size;
    seals.push({
      jobRef: r.job_ref,
      passportVersion: r.version_id
        ? { id: r.version_id, contentHash: r.content_hash!, merkleRoot: r.merkle_root! }
        : null,
      evidenceBundle: (JSON.parse(r.bundle) as { jws: string }).jws,
      deviceStatement: statement!,
      sealReceipt: r.receipt,
      epcisEvent: r.event ? (JSON.parse(r.event) as Record<string, unknown>) : null,
      log: logged
        ? {
            leafIndex: r.leaf_index!,
            treeSize: head.tree_size,
            inclusionProof: await deps.log.inclusion(r.leaf_index!, head.tree_size),
            treeHead: head.tree_head,
          }
        : null,
    });
  }
  const log = logUrl(issuer);
  return {
    type: LABEL_PROOF_TYPE,
    version: 1,
    issuer,
    label: {
      gtin,
      serial,
      digitalLink: rows[0]!.digital_link ?? `${issuer}${digitalLinkPath(gtin, serial)}`,
      status: candidate.voidedAt ? 'voided' : 'sealed',
      voidedAt: candidate.voidedAt,
    },
    seals,
    links: {
      signingKeys: `${issuer}/api/v2/public/signing-keys`,
      treeHead: `${log}/tree-head`,
      consistency: `${log}/consistency`,
    },
  };
}
