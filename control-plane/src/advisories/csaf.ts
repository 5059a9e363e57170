/**
 * The public form of a workspace's advisories, in the formats security tooling already reads: each advisory
 * a CSAF 2.0 document of the `csaf_security_advisory` profile (OASIS CSAF 2.0, §4.5), and the list of them a
 * ROLIE feed in its JSON rendering (RFC 8322, as CSAF 2.0 §7.1.20 distributes advisories), newest first.
 */
import type { Advisory, AdvisoryProduct } from './advisories.js';

export const CSAF_SCHEMA = 'https://docs.oasis-open.org/csaf/csaf/v2.0/csaf_json_schema.json';

export interface Publisher {
  name: string;
  slug: string;
}

/** Where a workspace's feed and documents are served. */
export function feedUrl(publicBaseUrl: string, slug: string): string {
  return `${publicBaseUrl}/api/v2/public/companies/${slug}/security-advisories`;
}

export function documentUrl(publicBaseUrl: string, slug: string, trackingId: string): string {
  return `${feedUrl(publicBaseUrl, slug)}/${encodeURIComponent(trackingId)}`;
}

const GTIN_NAMESPACE = 'https://www.gs1.org/standards/id-keys/gtin';

function productName(p: AdvisoryProduct): string {
  return p.version ? `${p.name} ${p.version}` : p.name;
}

/** The CSAF 2.0 document of one advisory. */
export function csafDocument(
  a: Advisory,
  publisher: Publisher,
  publicBaseUrl: string,
): Record<string, unknown> {
  const self = documentUrl(publicBaseUrl, publisher.slug, a.trackingId);
  const products = [
    ...a.affectedProducts.map((p) => ({ p, status: 'known_affected' as const })),
    ...a.fixedProducts.map((p) => ({ p, status: 'fixed' as const })),
  ].map(({ p, status }, i) => ({
    status,
    entry: {
      product_id: `CSAFPID-${String(i + 1).padStart(4, '0')}`,
      name: productName(p),
      ...(p.gtin
        ? {
            product_identification_helper: {
              x_generic_uris: [{ namespace: GTIN_NAMESPACE, uri: `https://id.gs1.org/01/${p.gtin}` }],
            },
          }
        : {}),
    },
  }));
  const ids = (status: 'known_affected' | 'fixed') =>
    products.filter((p) => p.status === status).map((p) => p.entry.product_id);
  const affected = ids('known_affected');
  const fixed = ids('fixed');
  const vulnerability = (cve: string | null) => ({
    ...(cve ? { cve } : { title: a.title }),
    notes: [{ category: 'description', title: 'Description', text: a.summary }],
    product_status: { known_affected: affected, ...(fixed.length > 0 ? { fixed } : {}) },
    remediations: [
      {
        category: a.remediation.category,
        details: a.remediation.details,
        product_ids: affected,
        ...(a.remediation.url ? { url: a.remediation.url } : {}),
      },
    ],
    threats: [{ category: 'impact', details: `Severity: ${a.severity}`, product_ids: affected }],
  });
  const notes: Record<string, unknown>[] = [{ category: 'summary', title: 'Summary', text: a.summary }];
  if (a.state === 'withdrawn')
    notes.push({
      category: 'general',
      title: 'Withdrawn',
      text: `This advisory was withdrawn on ${a.withdrawnAt}: ${a.withdrawalReason}`,
    });
  return {
    document: {
      category: 'csaf_security_advisory',
      csaf_version: '2.0',
      lang: 'en',
      title: a.state === 'withdrawn' ? `${a.title} (withdrawn)` : a.title,
      publisher: {
        category: 'vendor',
        name: publisher.name,
        namespace: feedUrl(publicBaseUrl, publisher.slug),
      },
      aggregate_severity: { text: a.severity },
      notes,
      references: [
        { category: 'self', summary: 'This advisory as a CSAF document', url: self },
        ...a.references.map((r) => ({ category: 'external', summary: r.summary, url: r.url })),
      ],
      tracking: {
        id: a.trackingId,
        status: 'final',
        version: String(a.version),
        initial_release_date: a.initialReleaseDate,
        current_release_date: a.currentReleaseDate,
        revision_history: a.revisions.map((r) => ({
          number: String(r.version),
          date: r.date,
          summary: r.summary,
        })),
      },
    },
    product_tree: { full_product_names: products.map((p) => p.entry) },
    vulnerabilities: a.cves.length > 0 ? a.cves.map((cve) => vulnerability(cve)) : [vulnerability(null)],
  };
}

/** The ROLIE feed of a workspace's advisories, newest first; an empty feed: none were published. */
export function rolieFeed(
  advisories: readonly Advisory[],
  publisher: Publisher,
  publicBaseUrl: string,
  now: number,
): Record<string, unknown> {
  const url = feedUrl(publicBaseUrl, publisher.slug);
  const entries = [...advisories].sort((a, b) => b.currentReleaseDate.localeCompare(a.currentReleaseDate));
  return {
    feed: {
      id: `${publisher.slug}-csaf-security-advisories`,
      title: `${publisher.name} security advisories`,
      link: [{ rel: 'self', href: url }],
      category: [{ scheme: 'urn:ietf:params:rolie:category:information-type', term: 'csaf' }],
      updated: entries[0]?.currentReleaseDate ?? new Date(now).toISOString(),
      entry: entries.map((a) => {
        const href = documentUrl(publicBaseUrl, publisher.slug, a.trackingId);
        return {
          id: a.trackingId,
          title: a.state === 'withdrawn' ? `${a.title} (withdrawn)` : a.title,
          link: [{ rel: 'self', href }],
          published: a.initialReleaseDate,
          updated: a.currentReleaseDate,
          summary: { content: a.summary },
          content: { type: 'application/json', src: href },
          format: { schema: CSAF_SCHEMA, version: '2.0' },
        };
      }),
    },
  };
}
