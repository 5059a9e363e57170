/**
 * For the web pages' tests only: a tiny browser stand-in over fetch that keeps the session cookie,
 * sends forms as a browser would (urlencoded, with an Origin header) and never follows redirects.
 */
export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
}

export type FormFields = Record<string, string | readonly string[]>;

export class FormClient {
  cookie: string | undefined;

  constructor(readonly baseUrl: string) {}

  async get(path: string): Promise<PageResponse> {
    return this.send(path, { method: 'GET', headers: this.headers() });
  }

  /** Posts a form; `origin: null` leaves the Origin header out, a string overrides it. */
  async post(path: string, fields: FormFields, opts: { origin?: string | null } = {}): Promise<PageResponse> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) {
      for (const v of typeof value === 'string' ? [value] : value) body.append(name, v);
    }
    const headers = this.headers({ 'content-type': 'application/x-www-form-urlencoded' });
    const origin = opts.origin === undefined ? this.baseUrl : opts.origin;
    if (origin !== null) headers.origin = origin;
    return this.send(path, { method: 'POST', headers, body: body.toString() });
  }

  /**
   * Signs up a new workspace, then signs in with it as a person does after the sign-up page (which
   * never signs in: see signup.ts). Returns the sign-in answer, which carries the session cookie.
   */
  async signUp(fields: { workspaceName: string; email: string; password?: string; sandbox?: boolean }) {
    const password = fields.password ?? 'correct horse battery';
    const signedUp = await this.post('/signup', {
      workspaceName: fields.workspaceName,
      email: fields.email,
      password,
      ...(fields.sandbox ? { sandbox: 'on' } : {}),
    });
    if (signedUp.status !== 303) throw new Error(`sign-up answered ${signedUp.status}`);
    return this.post('/signin', { email: fields.email, password });
  }

  /** The CSRF token of the settings page. */
  async csrfToken(): Promise<string> {
    const page = await this.get('/settings');
    const m = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!m?.[1]) throw new Error(`no CSRF token on /settings (status ${page.status})`);
    return m[1];
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...extra, ...(this.cookie ? { cookie: `dpp_session=${this.cookie}` } : {}) };
  }

  private async send(path: string, init: RequestInit): Promise<PageResponse> {
    const res = await fetch(this.baseUrl + path, { ...init, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const m = /^dpp_session=([^;]*)/.exec(line);
      if (m) this.cookie = m[1] || undefined;
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}

/** The text of an HTML page without its tags, whitespace collapsed, for assertions on what users read. */
export function visibleText(page: string): string {
  return page
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
