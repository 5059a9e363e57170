import type { Tier } from '../config/index.js';

export interface TenantInfo {
  id: string;
  name: string;
  tier: Tier;
  sandbox: boolean;
  sandboxExpiresAt: string | null;
}

/** Who is calling: the credential decides, never a field of the body (api-v2.md, Authentication §5). */
export type Principal =
  | { type: 'api_key'; id: string; tenant: TenantInfo; scopes: ReadonlySet<string> }
  | {
      type: 'device';
      id: string;
      tenant: TenantInfo;
      scopes: ReadonlySet<string>;
      /** The printers its enrollment binds it to (none: any printer), as read when the call was authenticated. */
      printerNames: readonly string[];
      /** Its public key (the JWK as stored), as read when the call was authenticated. */
      publicJwk: string;
    };

/**
 * Resolves a presented credential to a principal, or `null` when this authenticator does not
 * recognise it. Authenticators are tried in order (API keys, then device access tokens, ...).
 */
export type Authenticator = (credential: string) => Promise<Principal | null>;

/** The actor recorded in the audit log and on events. */
export interface Actor {
  type: 'api_key' | 'device' | 'user' | 'system';
  id: string | null;
}

export function actorOf(p: Principal): Actor {
  return { type: p.type, id: p.id };
}
