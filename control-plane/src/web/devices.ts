import { isTopicLevel } from '@dpp/shared';
import type { Request, Response } from 'express';
import { DeviceService, type DeviceView, type EnrollmentTokenView } from '../devices/index.js';
import { ApiError } from '../http/index.js';
import type { Session } from '../tenants/index.js';
import { csrf, errorSummary, formString, input, when, type FieldErrors } from './forms.js';
import { html, type SafeHtml } from './html.js';
import type { WebDeps } from './index.js';
import { seeOther, sendPage } from './layout.js';
import type { SessionHandler } from './session.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EXPIRY_HOURS = [1, 24, 72, 168] as const;

interface TokenForm {
  label: string;
  site: string;
  printers: string;
  hours: string;
}

interface DevicesView {
  status: number;
  session: Session;
  devices: DeviceView[];
  tokens: EnrollmentTokenView[];
  form?: TokenForm;
  errors?: FieldErrors;
  notice?: string;
  problem?: string;
  fresh?: EnrollmentTokenView & { token: string };
}

const NOTICES: Readonly<Record<string, string>> = {
  revoked: 'The device was revoked: its tokens stopped working and its MQTT session was closed.',
};

function deviceRows(session: Session, devices: readonly DeviceView[]): SafeHtml {
  if (devices.length === 0)
    return html`<p>
      No devices yet. Create an enrollment token below and run <code>dpp-agent enroll</code>.
    </p>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="sr-only">
        Devices, newest first
      </caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Site</th>
          <th scope="col">Printers</th>
          <th scope="col">Enrolled</th>
          <th scope="col">Last seen</th>
          <th scope="col">Status</th>
          <th scope="col"><span class="sr-only">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${devices.map(
          (d) =>
            html`<tr data-device-id="${d.id}">
              <th scope="row">${d.name}</th>
              <td data-label="Site">${d.site ?? '—'}</td>
              <td data-label="Printers">${d.printerNames.join(', ') || '—'}</td>
              <td data-label="Enrolled">${when(d.enrolledAt)}</td>
              <td data-label="Last seen">${when(d.lastSeenAt)}</td>
              <td data-label="Status">
                <span class="status-${d.status === 'active' ? 'active' : 'revoked'}">${d.status}</span>
              </td>
              <td>
                ${
                  d.status === 'active'
                    ? html`<form method="post" action="/settings/devices/${d.id}/revoke">
                        ${csrf(session)}
                        <button class="danger" type="submit" aria-label="Revoke ${d.name}">Revoke</button>
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

function tokenRows(tokens: readonly EnrollmentTokenView[]): SafeHtml {
  if (tokens.length === 0) return html`<p>No enrollment tokens yet.</p>`;
  return html`<div class="table-wrap">
    <table>
      <caption class="sr-only">
        Enrollment tokens, newest first
      </caption>
      <thead>
        <tr>
          <th scope="col">Label</th>
          <th scope="col">Site</th>
          <th scope="col">Printers</th>
          <th scope="col">Expires</th>
          <th scope="col">Status</th>
        </tr>
      </thead>
      <tbody>
        ${tokens.map(
          (t) =>
            html`<tr>
              <th scope="row">${t.label ?? '—'}</th>
              <td data-label="Site">${t.site ?? '—'}</td>
              <td data-label="Printers">${t.printerNames.join(', ') || 'any'}</td>
              <td data-label="Expires">${when(t.expiresAt)}</td>
              <td data-label="Status">${t.status}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function tokenForm(session: Session, form: TokenForm, errors: FieldErrors): SafeHtml {
  return html`<section class="card" aria-labelledby="token-h">
    <h2 id="token-h">Create an enrollment token</h2>
    <p>
      A one-time token a print-floor computer uses to enroll: <code>dpp-agent enroll --url … --token …</code>.
    </p>
    ${errorSummary(errors)}
    <form method="post" action="/settings/devices/enrollment-tokens" novalidate>
      ${csrf(session)}
      ${input({ name: 'label', label: 'Label', type: 'text', value: form.label, autocomplete: 'off', maxlength: 100, hint: 'Optional, e.g. "Line 3 PC".' }, errors)}
      ${input({ name: 'site', label: 'Site', type: 'text', value: form.site, autocomplete: 'off', maxlength: 100, hint: 'Optional.' }, errors)}
      ${input({ name: 'printers', label: 'Printer names', type: 'text', value: form.printers, autocomplete: 'off', maxlength: 500, hint: 'Optional, comma-separated: binds the device to these printers.' }, errors)}
      <label for="f-hours">Valid for</label>
      <select id="f-hours" name="hours">
        ${EXPIRY_HOURS.map(
          (h) =>
            html`<option value="${h}" ${String(h) === form.hours ? html` selected` : ''}>
              ${h === 1 ? '1 hour' : h < 48 ? `${h} hours` : `${h / 24} days`}
            </option>`,
        )}
      </select>
      <div class="actions"><button type="submit">Create token</button></div>
    </form>
  </section>`;
}

function render(res: Response, view: DevicesView): void {
  const { session } = view;
  sendPage(res, {
    status: view.status,
    title: 'Devices',
    session,
    main: html`<h1>Devices</h1>
      <p><a href="/settings">← API keys and workspace</a></p>
      ${view.problem ? html`<div class="alert bad" role="alert">${view.problem}</div>` : ''}
      ${view.notice ? html`<div class="alert good" role="status">${view.notice}</div>` : ''}
      ${
        view.fresh
          ? html`<section class="secret" aria-labelledby="tok-h">
              <h2 id="tok-h">Enrollment token created: copy it now</h2>
              <p>It is shown once, works once, and expires ${when(view.fresh.expiresAt)}.</p>
              <label for="new-secret">Enrollment token</label>
              <input
                id="new-secret"
                type="text"
                readonly
                value="${view.fresh.token}"
                autocomplete="off"
                spellcheck="false"
              />
            </section>`
          : ''
      }
      <section class="card" aria-labelledby="dev-h">
        <h2 id="dev-h">Enrolled devices</h2>
        ${deviceRows(session, view.devices)}
      </section>
      <section class="card" aria-labelledby="tokl-h">
        <h2 id="tokl-h">Enrollment tokens</h2>
        ${tokenRows(view.tokens)}
      </section>
      ${tokenForm(session, view.form ?? { label: '', site: '', printers: '', hours: '24' }, view.errors ?? {})}`,
  });
}

function checkForm(form: TokenForm): { errors: FieldErrors; printerNames: string[] } {
  const errors: FieldErrors = {};
  const printerNames = form.printers
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (form.label.length > 100) errors.label = 'Label must be at most 100 characters';
  if (form.site.length > 100) errors.site = 'Site must be at most 100 characters';
  const bad = printerNames.find((p) => !isTopicLevel(p) || p.length > 64);
  if (bad !== undefined)
    errors.printers = `Printer name "${bad}" must be 1 to 64 characters without / + or #`;
  if (!EXPIRY_HOURS.map(String).includes(form.hours)) errors.hours = 'Choose how long the token is valid';
  return { errors, printerNames };
}

/** The devices page: enrolled devices (revoke), enrollment tokens (create, shown once). */
export function devicePages(deps: WebDeps & { onDeviceRevoked: (id: string) => Promise<void> }) {
  const devices = new DeviceService(deps.store.db);
  const show = async (
    res: Response,
    session: Session,
    view: Omit<DevicesView, 'session' | 'devices' | 'tokens'>,
  ) =>
    render(res, {
      ...view,
      session,
      devices: await devices.list(session.tenant.id),
      tokens: await devices.listEnrollmentTokens(session.tenant.id),
    });
  const audit = (req: Request, session: Session) => ({
    actor: { type: 'user' as const, id: session.userId },
    correlationId: req.correlationId,
  });

  const page: SessionHandler = async (req, res, session) => {
    const name = req.query.notice;
    const notice = typeof name === 'string' && Object.hasOwn(NOTICES, name) ? NOTICES[name] : undefined;
    await show(res, session, { status: 200, ...(notice ? { notice } : {}) });
  };

  const createToken: SessionHandler = async (req, res, session) => {
    const form: TokenForm = {
      label: formString(req, 'label').trim(),
      site: formString(req, 'site').trim(),
      printers: formString(req, 'printers'),
      hours: formString(req, 'hours'),
    };
    const { errors, printerNames } = checkForm(form);
    if (Object.keys(errors).length > 0) return show(res, session, { status: 400, form, errors });
    const fresh = await devices.createEnrollmentToken(
      session.tenant.id,
      {
        label: form.label || undefined,
        site: form.site || undefined,
        printerNames,
        expiresInSeconds: Number(form.hours) * 3600,
      },
      audit(req, session),
    );
    await show(res, session, { status: 201, fresh });
  };

  const revoke: SessionHandler = async (req, res, session) => {
    const id = req.params.id;
    if (typeof id !== 'string' || !UUID.test(id))
      return show(res, session, { status: 404, problem: 'There is no such device.' });
    try {
      await devices.revoke(session.tenant.id, id.toLowerCase(), audit(req, session));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'ALREADY_REVOKED') {
        return show(res, session, {
          status: 409,
          problem: 'This device is already revoked. Nothing was changed.',
        });
      }
      if (err instanceof ApiError && err.status === 404)
        return show(res, session, { status: 404, problem: 'There is no such device.' });
      throw err;
    }
    await deps.onDeviceRevoked(id.toLowerCase());
    seeOther(res, '/settings/devices?notice=revoked');
  };

  return { page, createToken, revoke };
}
