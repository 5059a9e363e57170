import type { Request, Response } from 'express';
import { EmailTakenError, checkSignup, openSession, signUp, type SignupInput } from '../tenants/index.js';
import { errorSummary, formString, input, type FieldErrors } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';
import { currentSession, endSession, setSessionCookie } from './session.js';
import type { WebDeps } from './index.js';

export const SANDBOX_DAYS = 30;

interface SignupForm {
  workspaceName: string;
  email: string;
  sandbox: boolean;
}

function renderSignup(res: Response, status: number, form: SignupForm, errors: FieldErrors = {}): void {
  sendPage(res, {
    status,
    title: 'Sign up',
    main: html`<section class="card narrow" aria-labelledby="h">
      <h1 id="h">Create your workspace</h1>
      ${errorSummary(errors)}
      <form method="post" action="/signup" novalidate>
        ${input(
          {
            name: 'workspaceName',
            label: 'Workspace name',
            type: 'text',
            value: form.workspaceName,
            autocomplete: 'organization',
            hint: 'Usually your company name. 2 to 100 characters.',
            required: true,
            maxlength: 100,
          },
          errors,
        )}
        ${input(
          {
            name: 'email',
            label: 'Email',
            type: 'email',
            value: form.email,
            autocomplete: 'email',
            required: true,
          },
          errors,
        )}
        ${input(
          {
            name: 'password',
            label: 'Password',
            type: 'password',
            autocomplete: 'new-password',
            hint: 'At least 10 characters.',
            required: true,
            minlength: 10,
          },
          errors,
        )}
        <label class="check" for="f-sandbox">
          <input
            id="f-sandbox"
            name="sandbox"
            type="checkbox"
            value="on"
            ${form.sandbox ? html` checked` : ''}
          />
          <span>Sandbox workspace (${SANDBOX_DAYS} days), for trying the API; it expires after that.</span>
        </label>
        <p class="hint">New workspaces start on the free tier.</p>
        <div class="actions"><button type="submit">Create workspace</button></div>
      </form>
      <p>Already have an account? <a href="/signin">Sign in</a>.</p>
    </section>`,
  });
}

export function signupPage(deps: WebDeps) {
  const { db } = deps.store;
  return async (req: Request, res: Response): Promise<void> => {
    if (await currentSession(db, req)) return seeOther(res, '/settings');
    renderSignup(res, 200, { workspaceName: '', email: '', sandbox: false });
  };
}

/** Creates the tenant and its owner in one transaction, then signs the owner in. */
export function signupSubmit(deps: WebDeps) {
  const { db } = deps.store;
  return async (req: Request, res: Response): Promise<void> => {
    const form: SignupForm = {
      workspaceName: formString(req, 'workspaceName'),
      email: formString(req, 'email').trim(),
      sandbox: formString(req, 'sandbox') === 'on',
    };
    const signup: SignupInput = {
      ...form,
      password: formString(req, 'password'),
      tier: 'free',
      sandboxDays: SANDBOX_DAYS,
    };
    const problems = checkSignup(signup);
    if (problems.length > 0) {
      const errors = Object.fromEntries(problems.map((p) => [p.field, p.message]));
      return renderSignup(res, 400, form, errors);
    }
    let created: Awaited<ReturnType<typeof signUp>>;
    try {
      created = await signUp(db, signup);
    } catch (err) {
      if (!(err instanceof EmailTakenError)) throw err;
      return renderSignup(res, 409, form, { email: err.message });
    }
    await endSession(db, req);
    setSessionCookie(res, deps.config, await openSession(db, created.userId, created.tenant.id));
    deps.log.info(
      { module: 'web', tenant: created.tenant.id, correlationId: req.correlationId },
      'workspace signed up',
    );
    seeOther(res, '/settings');
  };
}
