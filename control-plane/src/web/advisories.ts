/**
 * The security advisories page of the settings: the workspace's advisories and its public feed, a form to
 * publish one, another to publish a new version of one, and a withdraw button. The forms are checked by the
 * same schemas as the API (advisories/schemas.ts); an error shows the form again with every field as typed.
 */
import type { Request, Response } from 'express';
import type { z } from 'zod';
import {
  AdvisoryChanges,
  AdvisoryInput,
  REMEDIATION_CATEGORIES,
  SEVERITIES,
  WithdrawBody,
  documentUrl,
  feedUrl,
  getAdvisory,
  listAdvisories,
  publishAdvisory,
  updateAdvisory,
  withdrawAdvisory,
  type Advisory,
  type AdvisoryContent,
} from '../advisories/index.js';
import { ApiError } from '../http/index.js';
import { slugOf, type Session } from '../tenants/index.js';
import { csrf, errorSummary, formString, input, when, type FieldErrors } from './forms.js';
import { html, type SafeHtml } from './html.js';
import type { WebDeps } from './index.js';
import { seeOther, sendPage } from './layout.js';
import type { SessionHandler } from './session.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The form as typed: every field a string. */
interface AdvisoryForm {
  title: string;
  summary: string;
  severity: string;
  cves: string;
  affected: string;
  fixed: string;
  remediationCategory: string;
  remediationDetails: string;
  remediationUrl: string;
  references: string;
  revisionSummary: string;
}
const FIELDS: (keyof AdvisoryForm)[] = [
  'title',
  'summary',
  'severity',
  'cves',
  'affected',
  'fixed',
  'remediationCategory',
  'remediationDetails',
  'remediationUrl',
  'references',
  'revisionSummary',
];

const NOTICES: Readonly<Record<string, string>> = {
  published: 'The advisory was published; it is in your feed now.',
  updated: 'A new version of the advisory was published.',
  unchanged: 'Nothing changed, so no new version was published.',
  withdrawn: 'The advisory was withdrawn; the feed says so.',
};

const EMPTY: AdvisoryForm = {
  title: '',
  summary: '',
  severity: 'high',
  cves: '',
  affected: '',
  fixed: '',
  remediationCategory: 'vendor_fix',
  remediationDetails: '',
  remediationUrl: '',
  references: '',
  revisionSummary: '',
};

const lines = (s: string) =>
  s
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
const cells = (line: string) => line.split('|').map((c) => c.trim());

/** "Name | version | GTIN" per line. */
function products(s: string) {
  return lines(s).map((l) => {
    const [name = '', version, gtin] = cells(l);
    return { name, ...(version ? { version } : {}), ...(gtin ? { gtin } : {}) };
  });
}

function bodyOf(f: AdvisoryForm): Record<string, unknown> {
  return {
    title: f.title,
    summary: f.summary,
    severity: f.severity,
    cves: f.cves.split(/[\s,]+/).filter(Boolean),
    affectedProducts: products(f.affected),
    fixedProducts: products(f.fixed),
    remediation: {
      category: f.remediationCategory,
      details: f.remediationDetails,
      ...(f.remediationUrl.trim() ? { url: f.remediationUrl.trim() } : {}),
    },
    references: lines(f.references).map((l) => {
      const [url = '', summary = ''] = cells(l);
      return { url, summary };
    }),
  };
}

function formOf(a: Advisory): AdvisoryForm {
  const product = (p: AdvisoryContent['affectedProducts'][number]) =>
    [p.name, p.version ?? '', p.gtin ?? ''].join(' | ').replace(/( \| )+$/, '');
  return {
    title: a.title,
    summary: a.summary,
    severity: a.severity,
    cves: a.cves.join(', '),
    affected: a.affectedProducts.map(product).join('\n'),
    fixed: a.fixedProducts.map(product).join('\n'),
    remediationCategory: a.remediation.category,
    remediationDetails: a.remediation.details,
    remediationUrl: a.remediation.url ?? '',
    references: a.references.map((r) => `${r.url} | ${r.summary}`).join('\n'),
    revisionSummary: '',
  };
}

/** The form field a schema issue belongs to. */
function fieldOf(path: readonly PropertyKey[]): keyof AdvisoryForm {
  const [first, second] = path.map(String);
  if (first === 'affectedProducts') return 'affected';
  if (first === 'fixedProducts') return 'fixed';
  if (first === 'remediation')
    return second === 'url'
      ? 'remediationUrl'
      : second === 'category'
        ? 'remediationCategory'
        : 'remediationDetails';
  return (FIELDS as string[]).includes(first ?? '') ? (first as keyof AdvisoryForm) : 'title';
}

function errorsOf(issues: readonly z.core.$ZodIssue[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of issues) {
    const field = fieldOf(issue.path);
    const n = issue.path[1];
    const where = typeof n !== 'number' ? '' : field === 'cves' ? ` (#${n + 1})` : ` (line ${n + 1})`;
    errors[field] ??= `${LABELS[field]}${where}: ${issue.message}`;
  }
  return errors;
}

const LABELS: Record<keyof AdvisoryForm, string> = {
  title: 'Title',
  summary: 'Summary',
  severity: 'Severity',
  cves: 'CVE ids',
  affected: 'Affected products',
  fixed: 'Fixed products',
  remediationCategory: 'Remediation',
  remediationDetails: 'What to do',
  remediationUrl: 'Remediation link',
  references: 'References',
  revisionSummary: 'What changed',
};

function area(
  name: keyof AdvisoryForm,
  value: string,
  errors: FieldErrors,
  hint: string,
  rows = 3,
): SafeHtml {
  const id = `f-${name}`;
  const error = errors[name];
  return html`<label for="${id}">${LABELS[name]}</label>
    <p class="hint" id="${id}-hint">${hint}</p>
    ${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
    <textarea
      id="${id}"
      name="${name}"
      rows="${rows}"
      aria-describedby="${id}-hint${error ? ` ${id}-error` : ''}"
      ${error ? html`aria-invalid="true"` : ''}
    >
${value}</textarea>`;
}

function choice(name: keyof AdvisoryForm, value: string, options: readonly string[]): SafeHtml {
  return html`<label for="f-${name}">${LABELS[name]}</label>
    <select id="f-${name}" name="${name}">
      ${options.map((o) => html`<option value="${o}" ${o === value ? html` selected` : ''}>${o.replace(/_/g, ' ')}</option>`)}
    </select>`;
}

function advisoryForm(
  session: Session,
  action: string,
  f: AdvisoryForm,
  errors: FieldErrors,
  edit: boolean,
): SafeHtml {
  const text = (name: keyof AdvisoryForm, hint: string, max: number) =>
    input(
      { name, label: LABELS[name], type: 'text', value: f[name], autocomplete: 'off', hint, maxlength: max },
      errors,
    );
  return html`${errorSummary(errors)}
    <form method="post" action="${action}" novalidate>
      ${csrf(session)} ${text('title', 'One line, as tools list it.', 200)}
      ${area('summary', f.summary, errors, 'What is wrong and who is affected.', 5)}
      ${choice('severity', f.severity, SEVERITIES)}
      ${text('cves', 'Optional: CVE ids, comma-separated.', 1000)}
      ${area('affected', f.affected, errors, 'One per line: name | versions | GTIN-14 (versions and GTIN optional).')}
      ${area('fixed', f.fixed, errors, 'Optional, one per line, as above: the versions that fix it.')}
      ${choice('remediationCategory', f.remediationCategory, REMEDIATION_CATEGORIES)}
      ${area('remediationDetails', f.remediationDetails, errors, 'What an affected customer should do.')}
      ${text('remediationUrl', 'Optional: where the fix or the instructions are.', 2000)}
      ${area('references', f.references, errors, 'Optional, one per line: https://… | what it is.')}
      ${edit ? text('revisionSummary', 'Goes into the revision history of the new version.', 500) : ''}
      <div class="actions">
        <button type="submit">${edit ? 'Publish the new version' : 'Publish advisory'}</button>
      </div>
    </form>`;
}

function advisoryRows(
  session: Session,
  advisories: readonly Advisory[],
  slug: string,
  base: string,
): SafeHtml {
  if (advisories.length === 0) return html`<p>None published: your feed is empty.</p>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="sr-only">
        Security advisories, newest first
      </caption>
      <thead>
        <tr>
          <th scope="col">Tracking id</th>
          <th scope="col">Title</th>
          <th scope="col">Severity</th>
          <th scope="col">Version</th>
          <th scope="col">Updated</th>
          <th scope="col">Status</th>
          <th scope="col"><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${advisories.map(
          (a) =>
            html`<tr data-advisory-id="${a.id}">
              <th scope="row"><a href="${documentUrl(base, slug, a.trackingId)}">${a.trackingId}</a></th>
              <td data-label="Title">${a.title}</td>
              <td data-label="Severity">${a.severity}</td>
              <td data-label="Version">${a.version}</td>
              <td data-label="Updated">${when(a.currentReleaseDate)}</td>
              <td data-label="Status">${a.state}</td>
              <td>
                ${
                  a.state === 'published'
                    ? html`<a href="/settings/advisories/${a.id}">Edit</a>
                        <form method="post" action="/settings/advisories/${a.id}/withdraw">
                          ${csrf(session)}
                          <label for="reason-${a.id}">Why withdraw ${a.trackingId}</label>
                          <input
                            id="reason-${a.id}"
                            name="reason"
                            type="text"
                            maxlength="1000"
                            autocomplete="off"
                          />
                          <button class="danger" type="submit">Withdraw</button>
                        </form>`
                    : ''
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

interface ListView {
  status: number;
  form?: AdvisoryForm;
  errors?: FieldErrors;
  notice?: string;
  problem?: string;
}

async function showList(deps: WebDeps, res: Response, session: Session, view: ListView): Promise<void> {
  const { db } = deps.store;
  const slug = await slugOf(db, session.tenant.id);
  const base = deps.config.publicBaseUrl;
  const page = await listAdvisories(db, session.tenant.id, { limit: 100 });
  const feed = feedUrl(base, slug);
  sendPage(res, {
    status: view.status,
    title: 'Security advisories',
    session,
    main: html`<h1>Security advisories</h1>
      <p><a href="/settings">← API keys and workspace</a></p>
      ${view.problem ? html`<div class="alert bad" role="alert">${view.problem}</div>` : ''}
      ${view.notice ? html`<div class="alert good" role="status">${view.notice}</div>` : ''}
      <p>
        Your public feed (CSAF 2.0, ROLIE): <a href="${feed}"><code>${feed}</code></a
        >. Anyone can read it; it moves with your company slug.
      </p>
      <section class="card" aria-labelledby="adv-h">
        <h2 id="adv-h">Published</h2>
        ${advisoryRows(session, page.data, slug, base)}
      </section>
      <section class="card" aria-labelledby="new-h">
        <h2 id="new-h">Publish an advisory</h2>
        ${advisoryForm(session, '/settings/advisories', view.form ?? EMPTY, view.errors ?? {}, false)}
      </section>`,
  });
}

function readForm(req: Request): AdvisoryForm {
  return Object.fromEntries(FIELDS.map((f) => [f, formString(req, f)])) as unknown as AdvisoryForm;
}

function advisoryId(req: Request): string | null {
  const id = req.params.id;
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : null;
}

function context(req: Request, session: Session) {
  return {
    tenantId: session.tenant.id,
    actor: { type: 'user' as const, id: session.userId },
    correlationId: req.correlationId,
    now: Date.now,
  };
}

/** A withdrawn or unknown advisory: the list again with what went wrong. */
function refused(deps: WebDeps, res: Response, session: Session, err: unknown): Promise<void> {
  if (!(err instanceof ApiError)) throw err;
  if (err.code === 'ADVISORY_NOT_FOUND')
    return showList(deps, res, session, {
      status: 404,
      problem: 'There is no such advisory in this workspace.',
    });
  if (err.code === 'INVALID_TRANSITION')
    return showList(deps, res, session, {
      status: 409,
      problem: 'This advisory was withdrawn, which is final. Nothing was changed.',
    });
  throw err;
}

export function advisoryPages(deps: WebDeps) {
  const { db } = deps.store;
  return {
    list: (async (req, res, session) => {
      const name = req.query.notice;
      const notice = typeof name === 'string' && Object.hasOwn(NOTICES, name) ? NOTICES[name] : undefined;
      await showList(deps, res, session, { status: 200, ...(notice ? { notice } : {}) });
    }) satisfies SessionHandler,
    publish: (async (req, res, session) => {
      const form = readForm(req);
      const parsed = AdvisoryInput.safeParse(bodyOf(form));
      if (!parsed.success)
        return showList(deps, res, session, { status: 400, form, errors: errorsOf(parsed.error.issues) });
      await publishAdvisory(db, context(req, session), parsed.data);
      seeOther(res, '/settings/advisories?notice=published');
    }) satisfies SessionHandler,
    edit: (async (req, res, session) => {
      const id = advisoryId(req);
      try {
        if (!id) throw new ApiError('ADVISORY_NOT_FOUND', 'not found');
        const a = await getAdvisory(db, session.tenant.id, id);
        if (a.state !== 'published') throw new ApiError('INVALID_TRANSITION', 'withdrawn');
        showEdit(res, session, a, formOf(a), {}, 200);
      } catch (err) {
        await refused(deps, res, session, err);
      }
    }) satisfies SessionHandler,
    update: (async (req, res, session) => {
      const id = advisoryId(req);
      const form = readForm(req);
      try {
        if (!id) throw new ApiError('ADVISORY_NOT_FOUND', 'not found');
        const a = await getAdvisory(db, session.tenant.id, id);
        const parsed = AdvisoryChanges.safeParse({ ...bodyOf(form), revisionSummary: form.revisionSummary });
        if (!parsed.success) return showEdit(res, session, a, form, errorsOf(parsed.error.issues), 400);
        const { revisionSummary, ...changes } = parsed.data as {
          revisionSummary: string;
        } & Partial<AdvisoryContent>;
        const { changed } = await updateAdvisory(db, context(req, session), id, changes, revisionSummary);
        seeOther(res, `/settings/advisories?notice=${changed ? 'updated' : 'unchanged'}`);
      } catch (err) {
        await refused(deps, res, session, err);
      }
    }) satisfies SessionHandler,
    withdraw: (async (req, res, session) => {
      const id = advisoryId(req);
      const parsed = WithdrawBody.safeParse({ reason: formString(req, 'reason') });
      if (!parsed.success)
        return showList(deps, res, session, {
          status: 400,
          problem: 'Say why the advisory is withdrawn: nothing was changed.',
        });
      try {
        if (!id) throw new ApiError('ADVISORY_NOT_FOUND', 'not found');
        await withdrawAdvisory(db, context(req, session), id, parsed.data.reason);
        seeOther(res, '/settings/advisories?notice=withdrawn');
      } catch (err) {
        await refused(deps, res, session, err);
      }
    }) satisfies SessionHandler,
  };
}

function showEdit(
  res: Response,
  session: Session,
  a: Advisory,
  form: AdvisoryForm,
  errors: FieldErrors,
  status: number,
): void {
  sendPage(res, {
    status,
    title: `Edit ${a.trackingId}`,
    session,
    main: html`<h1>Edit ${a.trackingId}</h1>
      <p><a href="/settings/advisories">← Security advisories</a></p>
      <p>
        Version ${a.version}, published ${when(a.currentReleaseDate)}. Saving publishes version
        ${a.version + 1}.
      </p>
      <section class="card" aria-labelledby="edit-h">
        <h2 id="edit-h">The new version</h2>
        ${advisoryForm(session, `/settings/advisories/${a.id}`, form, errors, true)}
      </section>`,
  });
}
