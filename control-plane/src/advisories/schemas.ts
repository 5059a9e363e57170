/** What the advisory routes and the settings page accept, and what the API answers. */
import { z } from 'zod';
import { REMEDIATION_CATEGORIES, SEVERITIES } from './advisories.js';

const text = (max: number) => z.string().trim().min(1).max(max);
const httpsUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).max(2000);

const ProductSchema = z.strictObject({
  name: text(200),
  version: text(100).optional().meta({ description: 'The versions affected or fixed, e.g. "< 2.4.1"' }),
  gtin: z
    .string()
    .regex(/^\d{14}$/, 'must be a GTIN-14 (14 digits)')
    .optional()
    .meta({
      description: 'The product as a GS1 Digital Link (https://id.gs1.org/01/<gtin>) in the CSAF tree',
    }),
});

const contentFields = {
  title: text(200),
  summary: text(10_000).meta({ description: 'What is wrong and who is affected' }),
  severity: z.enum(SEVERITIES, { error: `must be one of ${SEVERITIES.join(', ')}` }),
  cves: z
    .array(z.string().regex(/^CVE-\d{4}-\d{4,}$/, 'must be a CVE id, e.g. CVE-2026-12345'))
    .max(50)
    .refine((a) => new Set(a).size === a.length, 'must not repeat a CVE')
    .meta({
      description: 'One CSAF vulnerability per CVE; with none, one vulnerability titled as the advisory',
    }),
  affectedProducts: z.array(ProductSchema).min(1).max(100),
  fixedProducts: z.array(ProductSchema).max(100),
  remediation: z.strictObject({
    category: z.enum(REMEDIATION_CATEGORIES, {
      error: `must be one of ${REMEDIATION_CATEGORIES.join(', ')}`,
    }),
    details: text(5000),
    url: httpsUrl.optional(),
  }),
  references: z.array(z.strictObject({ url: httpsUrl, summary: text(500) })).max(50),
};

export const AdvisoryInput = z
  .strictObject({
    ...contentFields,
    cves: contentFields.cves.default([]),
    fixedProducts: contentFields.fixedProducts.default([]),
    references: contentFields.references.default([]),
  })
  .meta({ id: 'SecurityAdvisoryInput' });

export const AdvisoryChanges = z
  .strictObject({
    ...Object.fromEntries(Object.entries(contentFields).map(([k, v]) => [k, v.optional()])),
    revisionSummary: text(500).meta({ description: 'What changed, for the revision history' }),
  })
  .meta({ id: 'SecurityAdvisoryChanges' });

export const WithdrawBody = z.strictObject({ reason: text(1000) }).meta({ id: 'SecurityAdvisoryWithdrawal' });

export const AdvisorySchema = z
  .object({
    id: z.uuid(),
    trackingId: z
      .string()
      .meta({ description: 'The CSAF tracking id, <SLUG>-SA-<year>-<NNNN>; never changes' }),
    state: z.enum(['published', 'withdrawn']),
    version: z.number().int(),
    ...contentFields,
    initialReleaseDate: z.iso.datetime(),
    currentReleaseDate: z.iso.datetime(),
    withdrawnAt: z.iso.datetime().nullable(),
    withdrawalReason: z.string().nullable(),
    revisions: z.array(z.object({ version: z.number().int(), date: z.iso.datetime(), summary: z.string() })),
    csafUrl: z.url().meta({ description: 'The public CSAF document' }),
  })
  .meta({ id: 'SecurityAdvisory' });
