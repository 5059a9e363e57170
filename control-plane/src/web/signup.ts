import type { Request, Response } from 'express';
import type { MailMessage } from '../mail/index.js';
import { EmailTakenError, SlugTakenError, checkSignup, signUp, type SignupInput } from '../tenants/index.js';
import { errorSummary, formString, input, type FieldErrors } from './forms.js';
import { html } from './html.js';
import { seeOther, sendPage } from './layout.js';
import { clearSessionCookie, currentSession, endSession } from './session.js';
import type { WebDeps } from './index.js';

export const SANDBOX_DAYS = 30;

interface SignupForm {
  workspaceName: string;
  companySlug: string;
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
            name: 'companySlug',
            label: 'Public company slug (optional)',
            type: 'text',
            value: form.companySlug,
            autocomplete: 'off',
            hint: 'How your company appears in public addresses, such as your security advisory feed. Lower-case letters, digits and hyphens; made from the workspace name if left empty. You can change it in settings.',
            maxlength: 40,
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
    renderSignup(res, 200, { workspaceName: '', companySlug: '', email: '', sandbox: false });
  };
}

/** Where every accepted sign-up is sent, whether its email was new or already had an account. */
const SIGNED_UP = '/signin?notice=signed-up';

/*
 * The mails carry no text from the form (not even the workspace name), so the sign-up form cannot be
 * used to send chosen words to any address.
 */
function welcomeMail(to: string, baseUrl: string): MailMessage {
  return {
    to,
    subject: 'Your DPP workspace is ready',
    text: [
      'A workspace was created with this email address as its owner.',
      `Sign in to continue: ${baseUrl}/signin`,
      'If this was not you, contact support and we will remove it.',
    ].join('\n\n'),
  };
}

function emailTakenMail(to: string, baseUrl: string): MailMessage {
  return {
    to,
    subject: 'Someone tried to sign up with your email address',
    text: [
      'Someone tried to create a new workspace with this email address, which already has an account.',
      'Nothing was created and nothing about your account was changed.',
      `If it was you, sign in with your existing password: ${baseUrl}/signin`,
      'If it was not you, you can ignore this message.',
    ].join('\n\n'),
  };
}

/**
 * Creates the tenant and its owner in one transaction; when the email already has an account it
 * changes nothing and mails that account's owner instead. Both cases answer alike (303 to the sign-in
 * page with one notice, no session), so the form does not reveal which addresses have accounts (OWASP
 * ASVS 5.0 V6.3.8). That is why a new owner signs in after signing up rather than being signed in.
 */
export function signupSubmit(deps: WebDeps) {
  const { db } = deps.store;
  const base = deps.config.publicBaseUrl;
  return async (req: Request, res: Response): Promise<void> => {
    const form: SignupForm = {
      workspaceName: formString(req, 'workspaceName'),
      companySlug: formString(req, 'companySlug').trim().toLowerCase(),
      email: formString(req, 'email').trim(),
      sandbox: formString(req, 'sandbox') === 'on',
    };
    const signup: SignupInput = {
      ...form,
      companySlug: form.companySlug || undefined,
      password: formString(req, 'password'),
      tier: 'free',
      sandboxDays: SANDBOX_DAYS,
    };
    const problems = checkSignup(signup);
    if (problems.length > 0) {
      const errors = Object.fromEntries(problems.map((p) => [p.field, p.message]));
      return renderSignup(res, 400, form, errors);
    }
    const fields = { module: 'web', correlationId: req.correlationId };
    const to = form.email.toLowerCase();
    let mail: MailMessage;
    try {
      // signUp hashes the password before it looks at the email, so a taken email costs the same scrypt.
      const created = await signUp(db, signup);
      deps.log.info({ ...fields, tenant: created.tenant.id }, 'workspace signed up');
      mail = welcomeMail(to, base);
    } catch (err) {
      if (err instanceof SlugTakenError)
        return renderSignup(res, 409, form, {
          companySlug: 'This slug is taken: choose another, or leave it empty',
        });
      if (!(err instanceof EmailTakenError)) throw err;
      deps.log.info(fields, 'sign-up with a taken email: nothing created, owner told by mail');
      mail = emailTakenMail(to, base);
    }
    try {
      await deps.mailer.send(mail);
    } catch (err) {
      // A mail that fails must not change the answer: that would tell which of the two mails it was.
      deps.log.warn({ ...fields, err }, 'sign-up mail not sent');
    }
    // Ends any earlier session in both cases, so the sign-in page shows the notice instead of settings.
    await endSession(db, req);
    clearSessionCookie(res, deps.config);
    seeOther(res, SIGNED_UP);
  };
}
