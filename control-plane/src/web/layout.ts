import { randomBytes } from 'node:crypto';
import type { Response } from 'express';
import type { Session } from '../tenants/index.js';
import { SafeHtml, html } from './html.js';

/** A little CSS, inline so a page is one request. Colours meet WCAG AA contrast on white. */
const CSS = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#f4f6f8}
header{background:#12263f;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between}
header a,header .brand{color:#fff;font-weight:600;text-decoration:none}
header nav{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;min-width:0;overflow-wrap:anywhere}
header form{margin:0}
main{max-width:64rem;margin:0 auto;padding:1rem}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1rem 1.25rem;margin:0 0 1rem}
.narrow{max-width:28rem;margin:2rem auto}
h1{font-size:1.5rem;margin:.25rem 0 1rem}
h2{font-size:1.2rem;margin:.25rem 0 .75rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=email],input[type=password]{width:100%;padding:.5rem;font:inherit;border:1px solid #6e7781;border-radius:6px}
input:focus,button:focus,a:focus{outline:3px solid #0969da;outline-offset:2px}
.check{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.4rem 0}
.check input{margin-top:.3rem}
.hint{color:#57606a;font-size:.9rem;margin:.2rem 0}
.error{color:#a40e26;font-weight:600;margin:.25rem 0}
[aria-invalid=true]{border-color:#a40e26!important;border-width:2px!important}
button{font:inherit;font-weight:600;padding:.45rem 1rem;border-radius:6px;border:1px solid #0b4f9c;background:#0b5cad;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#0b4f9c}
button.danger{background:#fff;color:#a40e26;border-color:#a40e26}
header button{background:transparent;border-color:#fff;color:#fff;padding:.25rem .75rem}
.actions{margin-top:1rem}
.alert{border-radius:8px;padding:.75rem 1rem;margin:0 0 1rem;border:1px solid}
.alert.bad{background:#fff0f0;border-color:#a40e26;color:#7a0a1c}
.alert.good{background:#effaf1;border-color:#1a7f37;color:#0f5323}
.secret{background:#fff8c5;border:2px solid #9a6700;border-radius:8px;padding:1rem;margin:0 0 1rem}
.secret input{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;background:#fff}
.row{display:flex;gap:.5rem;align-items:center}
.row input{flex:1}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.5rem;border-bottom:1px solid #d0d7de;vertical-align:top}
td form{display:inline}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em;background:#eef1f4;padding:0 .25rem;border-radius:4px}
.status-active{color:#0f5323;font-weight:600}
.status-revoked{color:#7a0a1c;font-weight:600}
fieldset{border:1px solid #d0d7de;border-radius:6px;margin:.75rem 0;padding:.5rem 1rem}
legend{font-weight:600;padding:0 .25rem}
.scopes{display:grid;grid-template-columns:repeat(auto-fill,minmax(18rem,1fr));gap:0 1rem}
dl{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.25rem 1rem;margin:0}
dt{font-weight:600}
dd{margin:0;min-width:0;overflow-wrap:anywhere}
.secret code{overflow-wrap:anywhere}
@media (max-width:40rem){
main{padding:.75rem .5rem}
.card{padding:.75rem}
thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table,tbody,tr,th,td{display:block;width:100%}
tr{border-bottom:1px solid #d0d7de;padding:.5rem 0}
th,td{border:0;padding:.15rem 0}
td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;

/** A constant of ours, so it is trusted as markup. */
const STYLE = new SafeHtml(CSS);

const CSP = [
  "default-src 'none'",
  "style-src 'self' 'unsafe-inline'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
];

/** Headers on every page and redirect of the web UI. A page with a script allows it by nonce only. */
export function setPageHeaders(res: Response, scriptNonce?: string): void {
  const csp = scriptNonce ? [CSP[0], `script-src 'nonce-${scriptNonce}'`, ...CSP.slice(1)] : CSP;
  res.setHeader('Content-Security-Policy', csp.join('; '));
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  // Pages carry CSRF tokens and, once, an API key secret: never store them in any cache.
  res.setHeader('Cache-Control', 'no-store');
}

export interface Page {
  status: number;
  title: string;
  main: SafeHtml;
  /** Shows the workspace and a sign-out button in the header. */
  session?: Session | null;
  /** A constant script of ours (never built from input), allowed by a per-response nonce. */
  script?: string;
}

function headerNav(session: Session | null | undefined): SafeHtml {
  if (!session) {
    return html`<nav aria-label="Account"><a href="/signin">Sign in</a><a href="/signup">Sign up</a></nav>`;
  }
  return html`<nav aria-label="Account">
    <span>${session.email}</span>
    <form method="post" action="/signout">
      <input type="hidden" name="_csrf" value="${session.csrfToken}" />
      <button type="submit">Sign out</button>
    </form>
  </nav>`;
}

export function sendPage(res: Response, page: Page): void {
  const nonce = page.script ? randomBytes(16).toString('base64') : undefined;
  setPageHeaders(res, nonce);
  // prettier-ignore
  const script = nonce && page.script ? html`<script nonce="${nonce}">${new SafeHtml(page.script)}</script>` : '';
  const doc = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${page.title} · DPP control plane</title>
        <style>
          ${STYLE}
        </style>
      </head>
      <body>
        <header><a class="brand" href="/">DPP control plane</a>${headerNav(page.session)}</header>
        <main id="main">${page.main}</main>
        ${script}
      </body>
    </html> `;
  res.status(page.status).type('html').send(doc.value);
}

/** Redirect after a successful POST (303, so the browser follows with GET). Never carries a secret. */
export function seeOther(res: Response, location: string): void {
  setPageHeaders(res);
  res.redirect(303, location);
}
