import express, { type ErrorRequestHandler, type Router } from 'express';
import type { Config } from '../config/index.js';
import { failedAttemptThrottle, ipRateLimit, type IpLimiter, type Refusal } from '../http/index.js';
import type { Logger } from '../logging/logger.js';
import type { Mailer } from '../mail/index.js';
import type { Store } from '../store/index.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';
import { currentSession, sameOriginOnly, signedIn } from './session.js';
import { devicePages } from './devices.js';
import { advisoryPages } from './advisories.js';
import { changeWorkspaceSlug, createKey, revokeKey, rotateKey, settingsPage } from './settings.js';
import { signinPage, signinSubmit, signout } from './signin.js';
import { signupPage, signupSubmit } from './signup.js';

export interface WebDeps {
  store: Store;
  config: Config;
  log: Logger;
  mailer: Mailer;
  /** Closes a revoked device's MQTT session. */
  onDeviceRevoked?: (deviceId: string) => Promise<void>;
  /** Budgets per client IP: sign-in and sign-up spend `credentials`, failed sign-ins `failures`. */
  ipLimiter: IpLimiter;
}

function errorPage(title: string, message: string) {
  return html`<section class="card narrow" aria-labelledby="h">
    <h1 id="h">${title}</h1>
    <p>${message}</p>
    <p><a href="/">Back to the start</a></p>
  </section>`;
}

/** A spent budget on a form: a page that says when to try again, 429 with Retry-After. */
const tooMany =
  (now: () => number): Refusal =>
  (_req, res, _next, d) => {
    const retryAfter = Math.max(1, d.resetAt - Math.floor(now() / 1000));
    res.setHeader('Retry-After', String(retryAfter));
    sendPage(res, {
      status: 429,
      title: 'Too many attempts',
      main: errorPage(
        'Too many attempts',
        `Too many attempts from your address. Please try again in ${retryAfter} seconds.`,
      ),
    });
  };

/** Renders failures of the pages as pages, never as JSON and never with a stack trace. */
function pageErrors(log: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const type = (err as { type?: unknown } | null)?.type;
    if (type === 'entity.too.large') {
      return sendPage(res, {
        status: 413,
        title: 'Form too large',
        main: errorPage('Form too large', 'The form sent more data than this page accepts.'),
      });
    }
    log.error({ module: 'web', err, correlationId: req.correlationId }, 'page failed');
    if (res.headersSent) return void res.destroy();
    sendPage(res, {
      status: 500,
      title: 'Something went wrong',
      main: errorPage(
        'Something went wrong',
        `Please try again. If it keeps happening, quote this reference to support: ${req.correlationId}`,
      ),
    });
  };
}

/**
 * The small server-rendered pages: sign-up, sign-in, settings (API keys). Every other path falls
 * through to the API. Forms are urlencoded and parsed only on these routes.
 */
export function webRouter(deps: WebDeps): Router {
  const { db } = deps.store;
  const form = express.urlencoded({ extended: false, limit: '20kb' });
  const router = express.Router({ caseSensitive: true, strict: false });

  router.get('/', async (req, res) =>
    seeOther(res, (await currentSession(db, req)) ? '/settings' : '/signin'),
  );
  router.get('/signup', signupPage(deps));
  const now = Date.now;
  const credentials = ipRateLimit(deps.ipLimiter, 'credentials', now, tooMany(now));
  const failures = failedAttemptThrottle(deps.ipLimiter, (status) => status === 401, now, tooMany(now));
  router.post('/signup', credentials, sameOriginOnly(), form, signupSubmit(deps));
  router.get('/signin', signinPage(deps));
  router.post('/signin', credentials, failures, sameOriginOnly(), form, signinSubmit(deps));
  router.post('/signout', form, signedIn(db, signout(deps)));
  router.get('/settings', signedIn(db, settingsPage(deps)));
  router.post('/settings/api-keys', form, signedIn(db, createKey(deps)));
  router.post('/settings/workspace/slug', form, signedIn(db, changeWorkspaceSlug(deps)));
  router.post('/settings/api-keys/:id/rotate', form, signedIn(db, rotateKey(deps)));
  router.post('/settings/api-keys/:id/revoke', form, signedIn(db, revokeKey(deps)));
  const devices = devicePages({
    ...deps,
    onDeviceRevoked: deps.onDeviceRevoked ?? (() => Promise.resolve()),
  });
  const advisories = advisoryPages(deps);
  router.get('/settings/advisories', signedIn(db, advisories.list));
  router.post('/settings/advisories', form, signedIn(db, advisories.publish));
  router.get('/settings/advisories/:id', signedIn(db, advisories.edit));
  router.post('/settings/advisories/:id', form, signedIn(db, advisories.update));
  router.post('/settings/advisories/:id/withdraw', form, signedIn(db, advisories.withdraw));
  router.get('/settings/devices', signedIn(db, devices.page));
  router.post('/settings/devices/enrollment-tokens', form, signedIn(db, devices.createToken));
  router.post('/settings/devices/:id/revoke', form, signedIn(db, devices.revoke));
  router.use(pageErrors(deps.log.child({ module: 'web' })));
  return router;
}
