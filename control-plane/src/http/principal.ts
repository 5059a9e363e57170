import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Tier } from '../config/index.js';
import type { Database } from '../store/index.js';

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
      /**
       * Set when this principal was not read for this call but remembered from an earlier read: only an
       * operation whose route says `checkedInStatement` is given one (http/authenticate.ts).
       */
      unconfirmed?: Unconfirmed;
    };

/** A principal remembered from an earlier read, which the operation must check itself before it stands. */
export interface Unconfirmed {
  /**
   * True in a statement while the principal is still what was read: a statement that acts for it holds to
   * this, so that it acts only for the principal a read would find now.
   */
  stillCurrent(eb: ExpressionBuilder<Database, never>): Expression<SqlBool>;
  /**
   * Reads the principal now, as a call without a remembered principal would, and admits or refuses it as the
   * route does (http/authenticate.ts): null when the credential no longer admits anyone.
   */
  confirm(): Promise<Principal | null>;
}

/**
 * Resolves a presented credential to a principal, or `null` when this authenticator does not
 * recognise it. Authenticators are tried in order (API keys, then device access tokens, ...).
 */
export type Authenticator = (
  credential: string,
  opts?: { /** A remembered (unconfirmed) principal will do. */ remembered?: boolean },
) => Promise<Principal | null>;

/** The actor recorded in the audit log and on events. */
export interface Actor {
  type: 'api_key' | 'device' | 'user' | 'system';
  id: string | null;
}

export function actorOf(p: Principal): Actor {
  return { type: p.type, id: p.id };
}
