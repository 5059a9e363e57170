/** What the verifier says about each link of a proof (label-proof.md, "Checking a proof, link by link"). */
import { Broken } from './shape.js';
import { reasonOf } from './errors.js';

/** The links, in the order the doc checks them. */
export const LINKS = [
  'keys',
  'device statement',
  'evidence bundle',
  'passport version',
  'seal receipt',
  'EPCIS event',
  'log entry',
  'tree head',
  'log consistency',
] as const;
export type LinkName = (typeof LINKS)[number];

export type LinkStatus = 'verified' | 'broken' | 'pending';

export interface LinkResult {
  link: LinkName;
  status: LinkStatus;
  /** What was verified (a short human sentence), or why it is broken or pending. */
  detail: string;
}

/** A link that cannot be judged yet: the log has not taken the seal in. */
export class Pending extends Error {
  override readonly name = 'Pending';
}

/**
 * Runs the check of one link: its sentence when it verifies, broken with the reason when it throws Broken
 * (or anything else: an unexpected error never reads as verified), pending when it throws Pending.
 */
export async function judge(link: LinkName, check: () => Promise<string> | string): Promise<LinkResult> {
  try {
    return { link, status: 'verified', detail: await check() };
  } catch (e) {
    if (e instanceof Pending) return { link, status: 'pending', detail: e.message };
    if (e instanceof Broken) return { link, status: 'broken', detail: e.message };
    return { link, status: 'broken', detail: `could not be checked: ${reasonOf(e)}` };
  }
}

export function verified(link: LinkName, detail: string): LinkResult {
  return { link, status: 'verified', detail };
}

export function broken(link: LinkName, detail: string): LinkResult {
  return { link, status: 'broken', detail };
}
