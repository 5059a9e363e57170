import type { Request, Response } from 'express';
import { signIn } from '../tenants/index.js';
import { errorSummary, formString, input, type FieldErrors } from './forms.js';
import { html } from './html.js';
import type { WebDeps } from './index.js';
import { seeOther, sendPage } from './layout.js';
import { clearSessionCookie, currentSession, endSession, setSessionCookie } from './session.js';

/** Fixed messages a redirect may name; the query string never carries free text. */
const NOTICES: Readonly<Record<string, string>> = {
  // The same words whether the sign-up created a workspace or found the email taken (see signup.ts).
  'signed-up':
    'Thanks. We sent a message to the address you entered. To continue, sign in with that email and your password.',
};

function renderSignin(
  res: Response,
  status: number,
  email: string,
  errors: FieldErrors = {},
  notice?: string,
): void {
  sendPage(res, {
    status,
    title: 'Sign in',
    main: html`<section class="card narrow" aria-labelledby="h">
      <h1 id="h">Sign in</h1>
      ${notice ? html`<div class="alert good" role="status">${notice}</div>` : ''} ${errorSummary(errors)}
      <form method="post" action="/signin" novalidate>
        ${input(
          {
            name: 'email',
            label: 'Email',
            type: 'email',
            value: email,
            autocomplete: 'username',
            required: true,
          },
          errors,
        )}
        ${input(
          {
            name: 'password',
            label: 'Password',
            type: 'password',
            autocomplete: 'current-password',
            required: true,
          },
          errors,
        )}
        <div class="actions"><button type="submit">Sign in</button></div>
      </form>
      <p>No account yet? <a href="/signup">Create a workspace</a>.</p>
    </section>`,
  });
}

export function signinPage(deps: WebDeps) {
  const { db } = deps.store;
  return async (req: Request, res: Response): Promise<void> => {
    if (await currentSession(db, req)) return seeOther(res, '/settings');
    const name = req.query.notice;
    const notice = typeof name === 'string' && Object.hasOwn(NOTICES, name) ? NOTICES[name] : undefined;
    renderSignin(res, 200, '', {}, notice);
  };
}

export function signinSubmit(deps: WebDeps) {
  const { db } = deps.store;
  return async (req: Request, res: Response): Promise<void> => {
    const email = formString(req, 'email').trim();
    const password = formString(req, 'password');
    const errors: FieldErrors = {};
    if (!email) errors.email = 'Enter your email address';
    if (!password) errors.password = 'Enter your password';
    if (Object.keys(errors).length > 0) return renderSignin(res, 400, email, errors);
    const token = await signIn(db, email, password);
    // One message for an unknown email and a wrong password, so the form does not reveal accounts.
    if (!token) return renderSignin(res, 401, email, { email: 'Email or password is incorrect' });
    await endSession(db, req); // a fresh session on every sign-in: no session fixation
    setSessionCookie(res, deps.config, token);
    seeOther(res, '/settings');
  };
}

/** Ends the session (CSRF-checked by `signedIn`) and clears the cookie. */
export function signout(deps: WebDeps) {
  const { db } = deps.store;
  return async (req: Request, res: Response): Promise<void> => {
    await endSession(db, req);
    clearSessionCookie(res, deps.config);
    seeOther(res, '/signin');
  };
}
