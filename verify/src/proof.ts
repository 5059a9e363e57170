/**
 * The label proof document (label-proof.md, "The proof document"). Only its frame is read here: what a
 * seal holds is read by the check of each link, so a tampered field is a broken link rather than an
 * unreadable file.
 */
import { VerifyError } from './errors.js';
import { isObject, type Json } from './shape.js';

export interface LabelProof {
  issuer: string;
  label: { gtin: string; serial: string; digitalLink: string; status: string; voidedAt: string | null };
  seals: Json[];
  links: { signingKeys: string; treeHead: string; consistency: string };
}

function need<T>(ok: boolean, value: T, what: string): T {
  if (!ok) throw new VerifyError('NOT_A_PROOF', `not a dpp label proof: ${what}`);
  return value;
}

const isString = (v: unknown): v is string => typeof v === 'string';

export function parseProof(doc: unknown): LabelProof {
  const d = need(isObject(doc), doc as Json, 'not a JSON object');
  need(d.type === 'dpp-label-proof', null, 'type is not "dpp-label-proof"');
  need(d.version === 1, null, `version ${JSON.stringify(d.version)} is not 1`);
  const label = need(isObject(d.label), d.label as Json, 'no label');
  const links = need(isObject(d.links), d.links as Json, 'no links');
  const seals = need(Array.isArray(d.seals), d.seals as unknown[], 'no seals');
  for (const k of ['gtin', 'serial', 'digitalLink', 'status'] as const) {
    need(isString(label[k]), null, `label.${k} is not a string`);
  }
  for (const k of ['signingKeys', 'treeHead', 'consistency'] as const) {
    need(isString(links[k]), null, `links.${k} is not a string`);
  }
  need(isString(d.issuer), null, 'issuer is not a string');
  need(seals.length > 0, null, 'it lists no seal');
  need(seals.every(isObject), null, 'a seal is not an object');
  return {
    issuer: d.issuer as string,
    label: {
      gtin: label.gtin as string,
      serial: label.serial as string,
      digitalLink: label.digitalLink as string,
      status: label.status as string,
      voidedAt: isString(label.voidedAt) ? label.voidedAt : null,
    },
    seals: seals as Json[],
    links: {
      signingKeys: links.signingKeys as string,
      treeHead: links.treeHead as string,
      consistency: links.consistency as string,
    },
  };
}

/** The log's URL: `links.treeHead` without its `/tree-head` suffix (`<origin>/api/v2/public/log`). */
export function logUrlOf(proof: LabelProof): string {
  return proof.links.treeHead.replace(/\/tree-head\/?$/, '');
}
