import { createHash, timingSafeEqual } from 'node:crypto';
import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import type { Config } from '../config/index.js';
import { SESSION_TTL_MS, closeSession, findSession, type Session } from '../tenants/index.js';
import type { Db } from '../store/index.js';
import { formString } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';

export const SESSION_COOKIE = 'dpp_session';
export const CSRF_FIELD = '_csrf';

function cookieOptions(config: Config): CookieOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: config.env === 'production',
  };
}

/** Reads one cookie from the Cookie header (RFC 6265 §4.2.1 syntax); we need no cookie parser for that. */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function setSessionCookie(res: Response, config: Config, token: string): void {
  res.cookie(SESSION_COOKIE, token, { ...cookieOptions(config), maxAge: SESSION_TTL_MS });
}

export function clearSessionCookie(res: Response, config: Config): void {
  res.clearCookie(SESSION_COOKIE, cookieOptions(config));
}

export function currentSession(db: Db, req: Request): Promise<Session | null> {
  return findSession(db, readCookie(req, SESSION_COOKIE));
}

/** Ends the session named by the request's cookie, if any (sign-out, and before a new sign-in). */
export async function endSession(db: Db, req: Request): Promise<void> {
  const token = readCookie(req, SESSION_COOKIE);
  if (token) await closeSession(db, token);
}

/** Constant-time comparison; hashing first makes both sides the same length whatever was sent. */
export function csrfTokenMatches(expected: string, given: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b) && given.length > 0;
}

export function sendForbidden(res: Response, session: Session | null, message: string): void {
  sendPage(res, {
    status: 403,
    title: 'Request refused',
    session,
    main: html`<section class="card narrow" aria-labelledby="h">
      <h1 id="h">Request refused</h1>
      <p>${message}</p>
      <p><a href="/">Reload the page</a> and try again.</p>
    </section>`,
  });
}

export type SessionHandler = (req: Request, res: Response, session: Session) => Promise<void>;

/**
 * Runs `handler` for a signed-in user; otherwise sends the browser to /signin. Every method but GET
 * and HEAD must carry the session's CSRF token in the `_csrf` field of its form.
 */
export function signedIn(db: Db, handler: SessionHandler): RequestHandler {
  return async (req, res) => {
    const session = await currentSession(db, req);
    if (!session) return seeOther(res, '/signin');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (!csrfTokenMatches(session.csrfToken, formString(req, CSRF_FIELD))) {
        return sendForbidden(res, session, 'This form did not carry a valid security token.');
      }
    }
    await handler(req, res, session);
  };
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/**
 * Whether a form post comes from our own pages. Fetch Metadata first (`Sec-Fetch-Site`, sent by every
 * current browser whatever the referrer policy); then `Origin`, then `Referer`, compared with the
 * request's host. Our pages send `Referrer-Policy: no-referrer`, under which browsers serialise the
 * Origin of a form POST as "null" (Fetch §3.1, "append a request Origin header"), so "null" proves
 * nothing and is refused. A request naming no origin at all is refused too: browsers always send one.
 */
export function isSameOrigin(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site) return site === 'same-origin';
  const ours = hostOf(`${req.protocol}://${req.host ?? ''}`);
  if (!ours) return false;
  const origin = req.get('origin');
  if (origin && origin !== 'null') return hostOf(origin) === ours;
  const referer = req.get('referer');
  if (referer) return hostOf(referer) === ours;
  return false;
}

/** Guards the forms used before there is a session (sign-up, sign-in): SameSite cannot help there. */
export function sameOriginOnly(): RequestHandler {
  return (req, res, next) => {
    if (isSameOrigin(req)) return next();
    sendForbidden(res, null, 'This form was not sent from this site.');
  };
}
