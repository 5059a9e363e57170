/**
 * /p/{uid}: the consumer page a scanned label lands on. Server-rendered, no script, readable on a phone;
 * every value goes through the escaping `html` tag.
 */
import type { SchemaRegistry } from '../schemas/index.js';
import { SafeHtml, html, type Interpolation } from '../web/html.js';
import type { ItemInHand } from './lookup.js';
import { labelProofPath, type PublicPassport } from './view.js';

const CSS = new SafeHtml(`
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f4f6f8;overflow-wrap:anywhere}
.top{background:#0f3d2e;color:#fff;padding:.75rem 1rem;font-weight:600}
main{max-width:48rem;margin:0 auto;padding:1rem}
.card{background:#fff;border:1px solid #d0d7de;border-radius:10px;padding:1rem 1.25rem;margin:0 0 1rem}
.kicker{text-transform:uppercase;letter-spacing:.06em;font-size:.8rem;color:#57606a;margin:0}
h1{font-size:1.6rem;line-height:1.25;margin:.2rem 0 .5rem}
h2{font-size:1.15rem;margin:0 0 .75rem}
h3{font-size:1rem;margin:.5rem 0}
.badge{display:inline-block;border-radius:999px;padding:.1rem .7rem;font-size:.85rem;font-weight:600;border:1px solid}
.badge-active{color:#0f5323;background:#effaf1;border-color:#1a7f37}
.badge-suspended{color:#7a4a00;background:#fff8c5;border-color:#9a6700}
.badge-archived{color:#3d444d;background:#eef1f4;border-color:#6e7781}
.badge-gone{color:#7a0a1c;background:#fff0f0;border-color:#a40e26}
.notice{border-left:4px solid #9a6700;background:#fff8c5;padding:.5rem .75rem;margin:.75rem 0 0}
dl{display:grid;grid-template-columns:minmax(8rem,max-content) minmax(0,1fr);gap:.35rem 1rem;margin:0}
dt{font-weight:600;color:#3d444d}
dd{margin:0;min-width:0}
ul{margin:0;padding-left:1.2rem}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em;background:#eef1f4;padding:0 .25rem;border-radius:4px;word-break:break-all}
.hint{color:#57606a;font-size:.9rem;margin:.75rem 0 0}
a{color:#0b5cad}
footer{max-width:48rem;margin:0 auto;padding:0 1rem 2rem;color:#57606a;font-size:.9rem}
@media (max-width:30rem){dl{grid-template-columns:1fr;gap:0}dd{margin:0 0 .5rem}h1{font-size:1.4rem}main{padding:.75rem .5rem}.card{padding:.85rem}}
`);

/** A strict policy: no script, no external resource. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const PAGE_HEADERS = {
  'Content-Security-Policy': PAGE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  Vary: 'Accept',
};

function document(title: string, main: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · Digital Product Passport</title>
        <style>
          ${CSS}
        </style>
      </head>
      <body>
        <header class="top">Digital Product Passport</header>
        ${main}
      </body>
    </html>`.value;
}

/** "repairabilityScore" -> "Repairability score". */
function humanize(name: string): string {
  const words = name
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function value(v: unknown): Interpolation {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  if (typeof v === 'string' && /^https?:\/\//.test(v))
    return html`<a href="${v}" rel="nofollow noopener">${v}</a>`;
  if (Array.isArray(v)) {
    if (v.every((x) => !isRecord(x) && !Array.isArray(x))) return v.length ? v.map(String).join(', ') : '—';
    return html`<ul>
      ${v.map((x) => html`<li>${value(x)}</li>`)}
    </ul>`;
  }
  if (isRecord(v)) return fields(v);
  return String(v);
}

function fields(
  record: Record<string, unknown>,
  label: (name: string) => Interpolation = humanize,
): SafeHtml {
  const entries = Object.entries(record);
  if (entries.length === 0) return html`<p class="hint">No information given.</p>`;
  return html`<dl>
    ${entries.map(
      ([k, v]) =>
        html`<dt>${label(k)}</dt>
          <dd>${value(v)}</dd>`,
    )}
  </dl>`;
}

/** Units written out where the schema's symbol would puzzle a reader ('a' is the SI symbol for a year). */
const UNIT_WORDS: Readonly<Record<string, string>> = { a: 'years' };

function attributesCard(section: unknown, registry: SchemaRegistry): SafeHtml {
  if (!isRecord(section) || !isRecord(section.fields)) return html``;
  const schema = registry.all().find((v) => v.schemaId === section.schemaId);
  const props = schema?.fieldSchema.properties ?? {};
  const withUnits = Object.fromEntries(
    Object.entries(section.fields).map(([k, v]) => {
      const symbol = props[k]?.['x-unit'];
      const unit = symbol ? (UNIT_WORDS[symbol] ?? symbol) : undefined;
      return [k, unit && (typeof v === 'number' || typeof v === 'string') ? `${String(v)} ${unit}` : v];
    }),
  );
  return html`<section class="card" aria-labelledby="attributes">
    <h2 id="attributes">Product information</h2>
    ${fields(withUnits, (k) => props[k]?.title ?? humanize(k))}
    <p class="hint">
      Checked against ${schema ? `${schema.title} schema ${schema.version}` : String(section.schemaId)}.
    </p>
  </section>`;
}

function credentialsCard(section: unknown): SafeHtml {
  const list = Array.isArray(section) ? section.filter(isRecord) : [];
  return html`<section class="card" aria-labelledby="credentials">
    <h2 id="credentials">Certificates and validations</h2>
    ${
      list.length === 0
        ? html`<p class="hint">No validation credential is recorded.</p>`
        : html`<ul>
            ${list.map((c) => {
              const types = Array.isArray(c.types)
                ? c.types.filter((t) => t !== 'VerifiableCredential').map(String)
                : [];
              return html`<li>
                ${types.map(humanize).join(', ') || 'Credential'}, issued by
                <code>${String(c.issuer)}</code> (recorded ${String(c.anchoredAt).slice(0, 10)})
              </li>`;
            })}
          </ul>`
    }
  </section>`;
}

const STATE_BADGE: Readonly<Record<string, [string, string]>> = {
  suspended: ['Suspended', 'badge-suspended'],
  archived: ['Archived', 'badge-archived'],
};

/** A withdrawn or recalled item says so on its page, with the publisher's reason; the passport stays served. */
function marketNotice(m: PublicPassport['marketStatus']) {
  if (!m || m.status === 'placed_on_market') return '';
  const what = m.status === 'recalled' ? 'recalled' : 'withdrawn from the market';
  return html`<p class="notice" role="note">
    This product was ${what} on ${m.since.slice(0, 10)}${m.reason ? `: ${m.reason}` : ''}.
  </p>`;
}

/** The item in hand and the Digital Link its label carries. */
export type PageItem = ItemInHand & { digitalLink: string };

/** A voided item says so; its passport (of the model, say) may still be served. */
function voidedNotice(item: PageItem | undefined) {
  if (!item?.voidedAt) return '';
  return html`<p class="notice" role="note">
    This item was voided by its publisher on
    <time datetime="${item.voidedAt}">${item.voidedAt.slice(0, 10)}</time>.
  </p>`;
}

/** Whether an enrolled print device printed, encoded, scanned back and sealed the label; its proof when so. */
function labelState(item: PageItem): SafeHtml {
  if (!item.label) return html`<p>Label not verified by an enrolled print device</p>`;
  const sealedAt = item.label.sealedAt;
  return html`<p>
    Label verified: printed, encoded, scanned back and sealed on
    <time datetime="${sealedAt}">${sealedAt.slice(0, 10)}</time>.
    <a href="${labelProofPath(item.gtin, item.serial)}" type="application/json">Proof</a>
  </p>`;
}

/**
 * The page of a served passport. `item` is the item in hand (the scanned label's serial, checked to belong
 * to the product): its serial and Digital Link, voided notice, market status and label state. Without one
 * the page names no serial, since a model's own serial field is no item's.
 */
export function passportPage(p: PublicPassport, registry: SchemaRegistry, item?: PageItem): string {
  const product = isRecord(p.sections.product) ? p.sections.product : {};
  const identifiers = isRecord(p.sections.identifiers) ? p.sections.identifiers : {};
  const name = typeof product.name === 'string' ? product.name : 'Product';
  const [label, badge] = STATE_BADGE[p.state] ?? ['Active', 'badge-active'];
  const known = new Set(['product', 'identifiers', 'attributes', 'credentials']);
  const others = Object.entries(p.sections).filter(([k]) => !known.has(k));
  const main = html`<main id="main">
      <section class="card" aria-labelledby="title">
        <p class="kicker">${humanize(String(product.category ?? 'product'))}</p>
        <h1 id="title">${name}</h1>
        <p><span class="badge ${badge}" role="status">${label}</span></p>
        <p>${String(product.description ?? '')}</p>
        ${p.notice ? html`<p class="notice" role="note">${p.notice}</p>` : ''} ${voidedNotice(item)}
        ${marketNotice(item?.marketStatus ?? p.marketStatus)}
      </section>
      <section class="card" aria-labelledby="identification">
        <h2 id="identification">Identification</h2>
        <dl>
          <dt>GTIN</dt>
          <dd>${String(identifiers.gtin ?? '—')}</dd>
          ${
            item
              ? html`<dt>Serial number</dt>
                  <dd>${item.serial}</dd>`
              : ''
          }
          <dt>Granularity</dt>
          <dd>${humanize(String(product.granularity ?? '—'))}</dd>
          <dt>Digital Link</dt>
          <dd><code>${item?.digitalLink ?? p.digitalLink}</code></dd>
        </dl>
        ${item ? labelState(item) : ''}
      </section>
      ${attributesCard(p.sections.attributes, registry)}
      ${others.map(
        ([k, v]) =>
          html`<section class="card" aria-labelledby="s-${k}">
            <h2 id="s-${k}">${humanize(k)}</h2>
            ${value(v)}
          </section>`,
      )}
      ${credentialsCard(p.sections.credentials)}
      <section class="card" aria-labelledby="verification">
        <h2 id="verification">Verification</h2>
        <dl>
          <dt>Version</dt>
          <dd>${p.version.version}, published ${p.version.publishedAt.slice(0, 10)}</dd>
          <dt>Published by</dt>
          <dd>${p.publisher.name}</dd>
          <dt>Issuer</dt>
          <dd>${p.publisher.issuer ? html`<code>${p.publisher.issuer}</code>` : '—'}</dd>
          <dt>Version hash</dt>
          <dd><code>${p.version.hash}</code></dd>
          <dt>Merkle root</dt>
          <dd><code>${p.version.merkleRoot}</code></dd>
        </dl>
        <p class="hint">Machine-readable: <a href="${p.links.self}">${p.links.self}</a></p>
      </section>
    </main>
    <footer>Passport ${p.passportUid}</footer>`;
  return document(name, main);
}

const ERROR_TITLES: Readonly<Record<number, string>> = {
  400: 'This code cannot be read',
  404: 'Passport not found',
  410: 'Passport no longer available',
};

/** The page of a passport that is not served (404, 410 with the reason and the successor) or a bad code (400). */
export function notServedPage(
  status: number,
  message: string,
  goneReason: string | null,
  successor: string | null,
): string {
  const gone = status === 410;
  const title = ERROR_TITLES[status] ?? 'Passport not found';
  const reasons: Record<string, string> = {
    serial_voided: 'This item was voided by its publisher.',
    passport_voided: 'This passport was withdrawn by its publisher.',
  };
  const main = html`<main id="main">
    <section class="card" aria-labelledby="title">
      <h1 id="title">${title}</h1>
      ${gone ? html`<p><span class="badge badge-gone" role="status">No longer available</span></p>` : ''}
      <p>${goneReason ? (reasons[goneReason] ?? message) : message}</p>
      ${successor ? html`<p><a href="/p/${successor}" rel="successor-version">See the passport that replaces it</a></p>` : ''}
    </section>
  </main>`;
  return document(title, main);
}
