import { isValidGs1Serial, isValidGtin } from '@dpp/shared';
import { ApiError } from '../http/index.js';
import { isServed } from '../passports/index.js';
import type { Db } from '../store/index.js';
import { candidateByUid, resolveKey, withPublisher, type Candidate, type ItemCandidate } from './lookup.js';
import { notServedError } from './view.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A GS1 element string of AI (01) + AI (21) without separators, `01<gtin14>21<serial>` (AI 01 is fixed
 * length, so the split is unambiguous): another code a passport can be asked for by.
 */
export function parseElementString(code: string): { gtin: string; serial: string } | undefined {
  const m = /^01(\d{14})21(.{1,20})$/.exec(code);
  if (!m || !isValidGtin(m[1]!) || !isValidGs1Serial(m[2]!)) return undefined;
  return { gtin: m[1]!, serial: m[2]! };
}

export const ambiguous = (): ApiError =>
  new ApiError('PASSPORT_AMBIGUOUS', 'This code matches more than one published passport');

/**
 * The served passport of a uid: the product id, or an element string of GTIN + serial (matching more
 * than one published passport is 404 PASSPORT_AMBIGUOUS). Anything not served throws the public error.
 */
export async function findServed(
  db: Db,
  uid: string,
  base: '/api/v2/public/passport/' | '/p/',
): Promise<Candidate> {
  let candidate: ItemCandidate | undefined;
  if (UUID.test(uid)) {
    const c = await candidateByUid(db, uid.toLowerCase());
    if (c && isServed(c.status)) return c;
    candidate = c;
  } else {
    const key = parseElementString(uid);
    if (key) {
      const r = await resolveKey(db, key.gtin, key.serial, { requireRegistered: false });
      if (r.kind === 'ambiguous') throw ambiguous();
      if (r.kind === 'one' || r.kind === 'voided') candidate = r.candidate;
    }
  }
  // The publisher is read only for a passport shown.
  if (candidate && isServed(candidate.status)) return withPublisher(db, candidate);
  throw notServedError(candidate, base);
}
