import { ALL_SCOPES, API_KEY_SCOPES } from '@dpp/shared';
import type { Request, Response } from 'express';
import { ApiError } from '../http/index.js';
import { recordAudit } from '../audit/index.js';
import { type Db, isUniqueViolation } from '../store/index.js';
import {
  SlugTakenError,
  changeSlug,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  slugOf,
  slugProblem,
  type Session,
} from '../tenants/index.js';
import { formString, formStrings, type FieldErrors } from './forms.js';
import type { WebDeps } from './index.js';
import { seeOther } from './layout.js';
import { renderSettings, type KeyForm, type SettingsView } from './settings-page.js';
import type { SessionHandler } from './session.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const GRANTABLE: ReadonlySet<string> = new Set([ALL_SCOPES, ...API_KEY_SCOPES]);

/** Fixed messages a redirect may name; the query string never carries free text. */
const NOTICES: Readonly<Record<string, string>> = {
  revoked: 'The key was revoked. It stops working at once.',
  'slug-changed': 'The public company slug was changed.',
};

type View = Omit<SettingsView, 'session' | 'keys' | 'slug'> & {
  slug?: Omit<SettingsView['slug'], 'current'>;
};

async function show(db: Db, res: Response, session: Session, view: View): Promise<void> {
  const slug = { ...view.slug, current: await slugOf(db, session.tenant.id) };
  renderSettings(res, { ...view, session, keys: await listApiKeys(db, session.tenant.id), slug });
}

/** Changes the workspace's public company slug: valid and not another workspace's, else the form again. */
export function changeWorkspaceSlug(deps: WebDeps): SessionHandler {
  const { db } = deps.store;
  return async (req, res, session) => {
    const typed = formString(req, 'slug').trim().toLowerCase();
    const problem = slugProblem(typed);
    if (problem) return show(db, res, session, { status: 400, slug: { typed, error: problem } });
    try {
      await changeSlug(db, session.tenant.id, typed);
    } catch (err) {
      if (!(err instanceof SlugTakenError) && !isUniqueViolation(err)) throw err;
      return show(db, res, session, {
        status: 409,
        slug: { typed, error: 'This slug is taken: choose another' },
      });
    }
    await recordAudit(db, {
      tenantId: session.tenant.id,
      ...auditOf(req, session),
      action: 'tenant.slug_changed',
      resource: { type: 'tenant', id: session.tenant.id },
      details: { slug: typed },
    });
    seeOther(res, '/settings?notice=slug-changed');
  };
}

function auditOf(req: Request, session: Session) {
  return { actor: { type: 'user' as const, id: session.userId }, correlationId: req.correlationId };
}

export function settingsPage(deps: WebDeps): SessionHandler {
  return async (req, res, session) => {
    const name = req.query.notice;
    const notice = typeof name === 'string' && Object.hasOwn(NOTICES, name) ? NOTICES[name] : undefined;
    await show(deps.store.db, res, session, { status: 200, ...(notice ? { notice } : {}) });
  };
}

function checkKeyForm(form: KeyForm): FieldErrors {
  const errors: FieldErrors = {};
  if (form.name.length === 0) errors.name = 'Enter a name for the key';
  else if (form.name.length > 100) errors.name = 'Key name must be at most 100 characters';
  const unknown = form.scopes.filter((s) => !GRANTABLE.has(s));
  if (unknown.length > 0) errors.scopes = `Unknown scope: ${unknown.join(', ')}`;
  else if (form.scopes.length === 0) errors.scopes = 'Choose at least one scope';
  return errors;
}

export function createKey(deps: WebDeps): SessionHandler {
  const { db } = deps.store;
  return async (req, res, session) => {
    const form: KeyForm = { name: formString(req, 'name').trim(), scopes: formStrings(req, 'scopes') };
    const errors = checkKeyForm(form);
    if (Object.keys(errors).length > 0) return show(db, res, session, { status: 400, form, errors });
    // "*" already grants everything; storing it alone keeps the key's scopes honest.
    const scopes = form.scopes.includes(ALL_SCOPES) ? [ALL_SCOPES] : form.scopes;
    const key = await createApiKey(
      db,
      { tenantId: session.tenant.id, name: form.name, scopes },
      auditOf(req, session),
    );
    // The secret goes into this response body only: never a redirect, a cookie or a log line.
    await show(db, res, session, { status: 201, fresh: { key, rotated: false } });
  };
}

/** Maps the key services' typed errors to a page; anything else is a fault for the error page. */
async function keyProblem(db: Db, res: Response, session: Session, err: unknown, verb: string) {
  if (!(err instanceof ApiError)) throw err;
  if (err.code === 'ALREADY_REVOKED') {
    return show(db, res, session, {
      status: 409,
      problem: `This API key is already revoked, so it cannot be ${verb}. Nothing was changed.`,
    });
  }
  if (err.status === 404) return keyNotFound(db, res, session);
  throw err;
}

function keyNotFound(db: Db, res: Response, session: Session): Promise<void> {
  return show(db, res, session, { status: 404, problem: 'There is no such API key in this workspace.' });
}

function keyId(req: Request): string | null {
  const id = req.params.id;
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : null;
}

export function rotateKey(deps: WebDeps): SessionHandler {
  const { db } = deps.store;
  return async (req, res, session) => {
    const id = keyId(req);
    if (!id) return keyNotFound(db, res, session);
    let key: Awaited<ReturnType<typeof rotateApiKey>>;
    try {
      key = await rotateApiKey(db, session.tenant.id, id, auditOf(req, session));
    } catch (err) {
      return keyProblem(db, res, session, err, 'rotated');
    }
    await show(db, res, session, { status: 201, fresh: { key, rotated: true } });
  };
}

export function revokeKey(deps: WebDeps): SessionHandler {
  const { db } = deps.store;
  return async (req, res, session) => {
    const id = keyId(req);
    if (!id) return keyNotFound(db, res, session);
    try {
      await revokeApiKey(db, session.tenant.id, id, auditOf(req, session));
    } catch (err) {
      return keyProblem(db, res, session, err, 'revoked again');
    }
    seeOther(res, '/settings?notice=revoked');
  };
}
