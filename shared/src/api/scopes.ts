/**
 * API key scopes. The spec's scope table (api-v2.md, Authentication §3) is kept exactly, with its
 * legacy aliases; DESIGN.md names the scopes for the routes the spec leaves open.
 *
 * @example
 * expandScopes(['products:view']).has('products:read') // true: legacy alias
 */
export const SCOPES = {
  'dpp:edit': 'Generate passports; anchor validations',
  'dpp:read': 'Generation status, passport history, as-of, validations, command catalog',
  'products:read': 'Read products, versions, events, categories, schemas and import templates',
  'products:create': 'Create products, one or in batches; bulk ingest',
  'products:edit': 'Update, transition, void and publish-dpp products',
  'products:delete': 'Delete never-published products',
  'passports:publish': 'Broadcast passports to external registries (mid_market tier and up)',
  'passports:command': 'Send passport lifecycle commands',
  'production:create': 'Allocate serials; report print outcomes',
  'production:view': 'Export the print file',
  'epcis:capture': 'Capture EPCIS events; report print outcomes',
  'epcis:query': 'Query EPCIS events',
  'compliance:read': 'Regulation packs, compliance selection, recorded evaluations',
  'compliance:evaluate': 'Run sector projector evaluations of products',
  'compliance:packs': "Publish new versions of regulation packs for the workspace's evaluations",
  'webhooks:manage': 'Manage webhook subscriptions and deliveries',
  'keys:manage': 'List, rotate and revoke API keys',
  'advisories:manage': 'Publish, read, update and withdraw security advisories',
  'devices:manage': 'Enrollment tokens, device list, revoke, key rotation',
  'aidc:jobs': 'Create, read, list and cancel print jobs',
  'aidc:device': 'Device tokens only: claim, heartbeat, result',
  'supply_chain:edit': 'Accepted in place of dpp:edit for validation anchoring',
} as const;

export type Scope = keyof typeof SCOPES;

/** Legacy names that grant a current scope (api-v2.md, Authentication §3). */
export const SCOPE_ALIASES: Readonly<Record<string, Scope>> = {
  'products:view': 'products:read',
  'identifiers:read': 'production:view',
};

/** Scopes an API key can be given in the settings page (device-only scopes excluded). */
export const API_KEY_SCOPES = (Object.keys(SCOPES) as Scope[]).filter((s) => s !== 'aidc:device');

/** The wildcard that grants every scope. */
export const ALL_SCOPES = '*';

/**
 * The effective scope set of a credential: its own names, plus the scope each legacy alias grants.
 * Unknown names are kept (they grant nothing, since no route asks for them).
 */
export function expandScopes(granted: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const s of granted) {
    out.add(s);
    const target = SCOPE_ALIASES[s];
    if (target) out.add(target);
  }
  return out;
}

/** True when the granted scopes satisfy any one of `required` (the alternatives of an operation). */
export function hasAnyScope(granted: ReadonlySet<string>, required: readonly string[]): boolean {
  if (granted.has(ALL_SCOPES)) return true;
  return required.some((r) => granted.has(r));
}
