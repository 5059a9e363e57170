import type { NextFunction, Request, Response } from 'express';
import { expandScopes, hasAnyScope } from '@dpp/shared';
import { TIERS } from '../config/index.js';
import { ApiError } from './api-error.js';
import { bindRequestLog } from './request-log.js';
import type { Authenticator, Principal } from './principal.js';
import type { RouteAuth } from './route.js';

/** `Authorization: Bearer <secret>` or `x-api-key: <secret>` (api-v2.md, Authentication §1). */
export function presentedCredential(req: Request): string | null {
  const header = req.get('authorization');
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m ? m[1]! : null;
  }
  const apiKey = req.get('x-api-key');
  return apiKey ? apiKey.trim() : null;
}

export function unauthorized(): ApiError {
  return ApiError.plain(401, 'Missing or invalid credential', { headers: { 'WWW-Authenticate': 'Bearer' } });
}

export async function resolvePrincipal(
  req: Request,
  authenticators: readonly Authenticator[],
  opts?: { remembered?: boolean },
): Promise<Principal | null> {
  const credential = presentedCredential(req);
  if (!credential) return null;
  for (const authenticate of authenticators) {
    const principal = await authenticate(credential, opts);
    if (principal) return principal;
  }
  return null;
}

/**
 * Authentication and authorization from the credential alone: 401 without a code for a bad or missing
 * credential, 403 SANDBOX_EXPIRED, then the scope and credential-kind check (403 API_SCOPE_DENIED with
 * required/available,
 * or FORBIDDEN where the route says so), then the tier gate.
 */
export function authenticate(auth: RouteAuth, authenticators: readonly Authenticator[], now: () => number) {
  const remembered = auth.checkedInStatement === true;
  /** Throws the refusal of a principal this route does not admit. */
  const admit = (principal: Principal): void => {
    const allowedKinds = auth.principals ?? ['api_key'];
    const { tenant } = principal;
    if (tenant.sandbox && tenant.sandboxExpiresAt && Date.parse(tenant.sandboxExpiresAt) <= now()) {
      throw new ApiError('SANDBOX_EXPIRED', 'The sandbox of this workspace has expired', {
        details: { sandboxExpiresAt: tenant.sandboxExpiresAt },
      });
    }
    const granted = expandScopes([...principal.scopes]);
    // A valid credential of the wrong kind (a device token on an issuer route, an API key on a device-only
    // route) is refused like a missing scope: the caller is known, the operation is not theirs.
    if (!allowedKinds.includes(principal.type) || !hasAnyScope(granted, auth.scopes)) {
      const required = auth.scopes.join(' or ');
      const available = [...principal.scopes].sort();
      if (auth.deniedCode === 'FORBIDDEN') {
        throw new ApiError('FORBIDDEN', `This operation requires the ${required} scope`, {
          details: { required, available },
        });
      }
      throw new ApiError('API_SCOPE_DENIED', `This operation requires the ${required} scope`, {
        details: { required, available },
      });
    }
    if (auth.minTier && TIERS.indexOf(tenant.tier) < TIERS.indexOf(auth.minTier)) {
      throw new ApiError('FORBIDDEN', `This operation needs the ${auth.minTier} tier or higher`, {
        details: { requiredTier: auth.minTier, tier: tenant.tier },
      });
    }
  };
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    try {
      let principal = await resolvePrincipal(req, authenticators, { remembered });
      if (!principal) throw unauthorized();
      if (principal.type === 'device' && principal.unconfirmed) {
        // Read again (here, or later by the operation), it is admitted or refused as this route does.
        const { stillCurrent, confirm } = principal.unconfirmed;
        const confirmAdmitted = async () => {
          const now = await confirm();
          if (now) admit(now);
          return now;
        };
        principal = { ...principal, unconfirmed: { stillCurrent, confirm: confirmAdmitted } };
        try {
          admit(principal);
        } catch {
          // A remembered principal is not refused: the refusal is the one read now's.
          principal = await confirmAdmitted();
          if (!principal) throw unauthorized();
        }
      } else {
        admit(principal);
      }
      const { tenant } = principal;
      req.principal = principal;
      bindRequestLog(req, { tenant: tenant.id, principal: `${principal.type}:${principal.id}` });
      next();
    } catch (err) {
      next(err);
    }
  };
}
