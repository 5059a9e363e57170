import type { Request } from 'express';
import { html, type SafeHtml } from './html.js';
import { CSRF_FIELD } from './session.js';
import type { Session } from '../tenants/index.js';

/** A field of an `application/x-www-form-urlencoded` body; '' when absent or repeated. */
export function formString(req: Request, name: string): string {
  const value: unknown = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeated field (checkboxes sharing one name). */
export function formStrings(req: Request, name: string): string[] {
  const value: unknown = (req.body as Record<string, unknown> | undefined)?.[name];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** Messages by field name, shown next to their fields and summarised at the top of the form. */
export type FieldErrors = Partial<Record<string, string>>;

export interface InputOptions {
  name: string;
  label: string;
  type: 'text' | 'email' | 'password';
  value?: string;
  autocomplete: string;
  hint?: string;
  required?: boolean;
  minlength?: number;
  maxlength?: number;
}

/** A labelled input whose error message is tied to it with aria-describedby. */
export function input(o: InputOptions, errors: FieldErrors): SafeHtml {
  const error = errors[o.name];
  const id = `f-${o.name}`;
  const describedBy = [o.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const optional = [
    o.required ? html`required` : '',
    o.minlength ? html`minlength="${o.minlength}"` : '',
    o.maxlength ? html`maxlength="${o.maxlength}"` : '',
    describedBy ? html`aria-describedby="${describedBy}"` : '',
    error ? html`aria-invalid="true"` : '',
  ].map((a) => (a ? html` ${a}` : ''));
  return html`<label for="${id}">${o.label}</label>
    ${o.hint ? html`<p class="hint" id="${id}-hint">${o.hint}</p>` : ''}
    ${error ? html`<p class="error" id="${id}-error">${error}</p>` : ''}
    <input
      id="${id}"
      name="${o.name}"
      type="${o.type}"
      value="${o.value ?? ''}"
      autocomplete="${o.autocomplete}"
      ${optional}
    />`;
}

/** "There is a problem" box listing each message with a link to its field. */
export function errorSummary(errors: FieldErrors): SafeHtml {
  const entries = Object.entries(errors).filter((e): e is [string, string] => Boolean(e[1]));
  if (entries.length === 0) return html``;
  return html`<div class="alert bad" role="alert" aria-labelledby="problem-title">
    <p id="problem-title"><strong>There is a problem</strong></p>
    <ul>
      ${entries.map(([name, message]) => html`<li><a href="#f-${name}">${message}</a></li>`)}
    </ul>
  </div>`;
}

/** The hidden CSRF field every form of a signed-in page carries. */
export function csrf(session: Session): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}" />`;
}

/** A timestamp as `YYYY-MM-DD HH:MM UTC` in a `<time>`, or `none` when there is none. */
export function when(iso: string | null, none = 'never'): SafeHtml {
  return iso
    ? html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`
    : html`${none}`;
}
