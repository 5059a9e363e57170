import { ALL_SCOPES, API_KEY_SCOPES, SCOPES } from '@dpp/shared';
import type { Response } from 'express';
import type { ApiKeyView, Session } from '../tenants/index.js';
import { csrf, errorSummary, input, when, type FieldErrors } from './forms.js';
import { html, type SafeHtml } from './html.js';
import { sendPage } from './layout.js';

export interface KeyForm {
  name: string;
  scopes: string[];
}

export interface SettingsView {
  status: number;
  session: Session;
  keys: ApiKeyView[];
  /** What the user typed into the create-key form, when it is shown again with errors. */
  form?: KeyForm;
  errors?: FieldErrors;
  /** A success message. */
  notice?: string;
  /** An error about an action on a key (e.g. already revoked). */
  problem?: string;
  /** A key just created or rotated: its secret is shown in this response and never again. */
  fresh?: { key: ApiKeyView & { secret: string }; rotated: boolean };
  /** The workspace's public company slug, and what the user typed when it is shown again with an error. */
  slug: { current: string; typed?: string; error?: string };
}

/** Selects the secret on focus and copies it on click; allowed by the page's CSP nonce. */
const COPY_SCRIPT = `
const secret = document.getElementById('new-secret');
const copy = document.getElementById('copy-secret');
const status = document.getElementById('copy-status');
secret.addEventListener('focus', () => secret.select());
copy.addEventListener('click', async () => {
  secret.focus();
  secret.select();
  try {
    await navigator.clipboard.writeText(secret.value);
    status.textContent = 'Copied to the clipboard.';
  } catch {
    status.textContent = 'Selected: press Ctrl+C (or Cmd+C) to copy.';
  }
});
`;

function scopeList(scopes: readonly string[]): SafeHtml {
  if (scopes.length === 0) return html`<em>none</em>`;
  return html`${scopes.map(
    (s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>${s === ALL_SCOPES ? ' (all scopes)' : ''}`,
  )}`;
}

function workspace(session: Session, slug: SettingsView['slug']): SafeHtml {
  const t = session.tenant;
  const errors: FieldErrors = slug.error ? { slug: slug.error } : {};
  return html`<section class="card" aria-labelledby="ws">
    <h2 id="ws">Workspace</h2>
    <dl>
      <dt>Name</dt>
      <dd>${t.name}</dd>
      <dt>Public company slug</dt>
      <dd><code>${slug.current}</code></dd>
      <dt>Tier</dt>
      <dd>${t.tier}</dd>
      <dt>Sandbox</dt>
      <dd>${t.sandbox ? html`yes, expires ${when(t.sandboxExpiresAt)}` : 'no'}</dd>
      <dt>Signed in as</dt>
      <dd>${session.email}</dd>
    </dl>
    <form method="post" action="/settings/workspace/slug" novalidate>
      ${csrf(session)} ${errorSummary(errors)}
      ${input(
        {
          name: 'slug',
          label: 'Change the public company slug',
          type: 'text',
          value: slug.typed ?? slug.current,
          autocomplete: 'off',
          hint: 'Used in public addresses such as your security advisory feed; the old one stops working at once.',
          required: true,
          maxlength: 40,
        },
        errors,
      )}
      <div class="actions"><button class="secondary" type="submit">Change slug</button></div>
    </form>
  </section>`;
}

function freshSecret(fresh: NonNullable<SettingsView['fresh']>): SafeHtml {
  const { key, rotated } = fresh;
  return html`<section class="secret" aria-labelledby="secret-h">
    <h2 id="secret-h">${rotated ? 'Key rotated' : 'Key created'}: copy its secret now</h2>
    <p>
      This is the only time the secret of <strong>${key.name}</strong> is shown; we keep only a hash of
      it.${rotated ? ' The old key was revoked and stops working now.' : ''}
    </p>
    <p>Key ID: <code>${key.id}</code></p>
    <label for="new-secret">API key secret</label>
    <div class="row">
      <input
        id="new-secret"
        type="text"
        readonly
        value="${key.secret}"
        autocomplete="off"
        spellcheck="false"
      />
      <button type="button" id="copy-secret">Copy</button>
    </div>
    <p class="hint" id="copy-status" role="status"></p>
  </section>`;
}

function keyRow(session: Session, key: ApiKeyView, rotated: boolean): SafeHtml {
  const active = key.revokedAt === null;
  return html`<tr data-key-id="${key.id}">
    <th scope="row">${key.name}</th>
    <td data-label="Prefix"><code>${key.prefix}</code></td>
    <td data-label="Scopes">${scopeList(key.scopes)}</td>
    <td data-label="Created">${when(key.createdAt)}</td>
    <td data-label="Last used">${when(key.lastUsedAt)}</td>
    <td data-label="Status">
      ${
        active
          ? html`<span class="status-active">active</span>`
          : html`<span class="status-revoked">${rotated ? 'rotated' : 'revoked'}</span>
              ${when(key.revokedAt)}`
      }
    </td>
    <td>
      ${
        active
          ? html`<form method="post" action="/settings/api-keys/${key.id}/rotate">
                ${csrf(session)}<button class="secondary" type="submit" aria-label="Rotate ${key.name}">
                  Rotate
                </button>
              </form>
              <form method="post" action="/settings/api-keys/${key.id}/revoke">
                ${csrf(session)}<button class="danger" type="submit" aria-label="Revoke ${key.name}">
                  Revoke
                </button>
              </form>`
          : ''
      }
    </td>
  </tr>`;
}

function keyTable(session: Session, keys: readonly ApiKeyView[]): SafeHtml {
  if (keys.length === 0) return html`<p>No API keys yet. Create one below.</p>`;
  // A key that another key was rotated from was revoked by that rotation.
  const replaced = new Set(keys.map((k) => k.rotatedFrom).filter((id) => id !== null));
  return html`<div class="table-wrap">
    <table>
      <caption class="sr-only">
        API keys, newest first
      </caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Prefix</th>
          <th scope="col">Scopes</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">Status</th>
          <th scope="col"><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${keys.map((k) => keyRow(session, k, replaced.has(k.id)))}
      </tbody>
    </table>
  </div>`;
}

function scopeBox(value: string, label: SafeHtml, checked: boolean): SafeHtml {
  const id = `scope-${value === ALL_SCOPES ? 'all' : value.replace(/[^a-z_]/g, '-')}`;
  return html`<label class="check" for="${id}">
    <input id="${id}" type="checkbox" name="scopes" value="${value}" ${checked ? html` checked` : ''} />
    <span>${label}</span>
  </label>`;
}

function createForm(session: Session, form: KeyForm, errors: FieldErrors): SafeHtml {
  const chosen = new Set(form.scopes);
  return html`<section class="card" aria-labelledby="create-h">
    <h2 id="create-h">Create an API key</h2>
    ${errorSummary(errors)}
    <form method="post" action="/settings/api-keys" novalidate>
      ${csrf(session)}
      ${input(
        {
          name: 'name',
          label: 'Key name',
          type: 'text',
          value: form.name,
          autocomplete: 'off',
          hint: 'What the key is for, e.g. "ERP integration". Up to 100 characters.',
          required: true,
          maxlength: 100,
        },
        errors,
      )}
      <fieldset id="f-scopes" ${errors.scopes ? html` aria-describedby="f-scopes-error"` : ''}>
        <legend>Scopes</legend>
        ${errors.scopes ? html`<p class="error" id="f-scopes-error">${errors.scopes}</p>` : ''}
        ${scopeBox(ALL_SCOPES, html`<strong>All scopes (<code>*</code>)</strong>`, chosen.has(ALL_SCOPES))}
        <div class="scopes">
          ${API_KEY_SCOPES.map((s) => scopeBox(s, html`<code>${s}</code> ${SCOPES[s]}`, chosen.has(s)))}
        </div>
      </fieldset>
      <div class="actions"><button type="submit">Create key</button></div>
    </form>
  </section>`;
}

export function renderSettings(res: Response, view: SettingsView): void {
  const { session } = view;
  sendPage(res, {
    status: view.status,
    title: 'Settings',
    session,
    ...(view.fresh ? { script: COPY_SCRIPT } : {}),
    main: html`<h1>Settings</h1>
      <p>
        <a href="/settings/devices">Devices and enrollment tokens →</a> ·
        <a href="/settings/advisories">Security advisories →</a>
      </p>
      ${view.problem ? html`<div class="alert bad" role="alert">${view.problem}</div>` : ''}
      ${view.notice ? html`<div class="alert good" role="status">${view.notice}</div>` : ''}
      ${view.fresh ? freshSecret(view.fresh) : ''} ${workspace(session, view.slug)}
      <section class="card" aria-labelledby="keys-h">
        <h2 id="keys-h">API keys</h2>
        ${keyTable(session, view.keys)}
      </section>
      ${createForm(session, view.form ?? { name: '', scopes: [] }, view.errors ?? {})}`,
  });
}
