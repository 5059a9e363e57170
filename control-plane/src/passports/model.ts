/**
 * The passport's command lifecycle and what the public sees of each state.
 *
 * api-v2.md (States: Passport command lifecycle) fixes draft, submitted, approved, published and six
 * rows of the table; the rest of the machine is ours and lives in `transitions.ts`.
 */

export const PASSPORT_STATES = [
  'draft',
  'submitted',
  'approved',
  'published',
  'suspended',
  'revoked',
  'archived',
  'recycled',
] as const;
export type PassportState = (typeof PASSPORT_STATES)[number];

/** Audiences of PASSPORT.PUBLISH (payload.disclosureTier) and of content sections. */
export const DISCLOSURE_TIERS = ['public', 'partner', 'internal'] as const;
export type DisclosureTier = (typeof DISCLOSURE_TIERS)[number];

/** Sections never shown on the public route unless a publish says otherwise. */
export const DEFAULT_SECTION_TIERS: Readonly<Record<string, DisclosureTier>> = { customData: 'internal' };

/** The tier of a section: the recorded one, else the default, else public. */
export function sectionTier(tiers: Readonly<Record<string, string>>, section: string): DisclosureTier {
  const t = tiers[section] ?? DEFAULT_SECTION_TIERS[section] ?? 'public';
  return (DISCLOSURE_TIERS as readonly string[]).includes(t) ? (t as DisclosureTier) : 'internal';
}

/** `X-DPP-Gone-Reason` values (api-v2.md, Errors: PASSPORT_GONE). */
export type GoneReason = 'serial_voided' | 'passport_voided';

/**
 * What GET /api/v2/public/passport/{uid} answers for a passport:
 * - `live`: 200, and the passport can be printed on labels (readyToPrint with a validation);
 * - `shown`: 200 with its state (suspended, archived: "never 410", and not printable);
 * - `hidden`: 404 PASSPORT_NOT_FOUND (never published, under review, or not published to the public);
 * - `gone`: 410 PASSPORT_GONE, with a reason header unless the item simply ceased (recycled).
 */
export type PublicStatus =
  | { kind: 'live' }
  | { kind: 'shown' }
  | { kind: 'hidden'; why: 'never_published' | 'under_review' | 'not_public' }
  | { kind: 'gone'; reason: GoneReason | null };

export interface VisibilityInput {
  /** 0 when no version was ever published. */
  currentVersion: number;
  state: string;
  disclosureTier: string;
  productVoided: boolean;
  granularity: string;
}

/**
 * The one visibility rule, shared by the public route, the resolver, /p/{uid}, readyToPrint and as-of.
 *
 * - A voided product is gone: `serial_voided` for an item-granularity product (a serialized item),
 *   `passport_voided` for a model or batch passport.
 * - PASSPORT.REVOKE is gone (`passport_voided`); PASSPORT.RECYCLE is gone without a reason header (the item
 *   ceased to exist, like a ceased battery).
 * - Nothing published yet: hidden.
 * - submitted and approved: hidden. This is the spec's SUBMIT-on-published hazard: the public route reads
 *   the command state, so SUBMIT sent to a live passport takes it from 200 to 404.
 * - Published to partners or internally only (PASSPORT.PUBLISH disclosureTier): hidden from the public.
 * - suspended and archived: shown with their state (api-v2.md: never 410), not live.
 * - draft and published: live. A passport reached through the documented journey (generate, publish)
 *   is still draft in the command lifecycle, and it is served.
 */
export function publicStatus(p: VisibilityInput): PublicStatus {
  if (p.productVoided)
    return { kind: 'gone', reason: p.granularity === 'item' ? 'serial_voided' : 'passport_voided' };
  if (p.state === 'revoked') return { kind: 'gone', reason: 'passport_voided' };
  if (p.state === 'recycled') return { kind: 'gone', reason: null };
  if (p.currentVersion < 1) return { kind: 'hidden', why: 'never_published' };
  if (p.state === 'submitted' || p.state === 'approved') return { kind: 'hidden', why: 'under_review' };
  if (p.disclosureTier !== 'public') return { kind: 'hidden', why: 'not_public' };
  if (p.state === 'suspended' || p.state === 'archived') return { kind: 'shown' };
  return { kind: 'live' };
}

/** Whether the public route answers 200. */
export function isServed(s: PublicStatus): boolean {
  return s.kind === 'live' || s.kind === 'shown';
}
