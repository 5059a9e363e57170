import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.js';
import { createLogger } from '../logging/logger.js';
import { startControlPlane, type ControlPlane } from '../server.js';
import { FormClient } from '@dpp/testkit/web';

/** A production-mode control plane whose every log line (at trace level) is kept for inspection. */
describe('web session in production mode, and what reaches the logs', () => {
  let cp: ControlPlane;
  let dir: string;
  const lines: string[] = [];

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dpp-web-'));
    const config = loadConfig({
      DPP_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      MQTT_PORT: '0',
      DATA_DIR: dir,
      LOG_LEVEL: 'trace',
    });
    const log = createLogger({ level: 'trace', destination: { write: (line: string) => lines.push(line) } });
    cp = await startControlPlane(config, { log });
  });
  afterAll(async () => {
    await cp.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('marks the session cookie Secure, HttpOnly and SameSite=Lax', async () => {
    const res = await new FormClient(cp.url).signUp({ workspaceName: 'Prod Co', email: 'prod@example.com' });
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((l) => l.startsWith('dpp_session='));
    expect(cookie).toMatch(/; Secure(;|$)/);
    expect(cookie).toMatch(/; HttpOnly(;|$)/);
    expect(cookie).toMatch(/; SameSite=Lax(;|$)/);
  });

  it('never logs a key secret, a session token or a password', async () => {
    const c = new FormClient(cp.url);
    await c.signUp({ workspaceName: 'Log Co', email: 'log@example.com', password: 'hunter2-but-longer' });
    const csrf = await c.csrfToken();
    const created = await c.post('/settings/api-keys', { _csrf: csrf, name: 'logged?', scopes: ['*'] });
    const id = /Key ID: <code>([0-9a-f-]{36})</.exec(created.text)?.[1];
    const rotated = await c.post(`/settings/api-keys/${id}/rotate`, { _csrf: csrf });
    await c.post('/settings/api-keys', { _csrf: 'wrong', name: 'x', scopes: ['*'] });
    const secrets = [created.text, rotated.text].map(
      (t) => /id="new-secret"[^>]*\svalue="([^"]+)"/.exec(t)?.[1],
    );
    expect(secrets.every((s) => s?.startsWith('dpp_sk_'))).toBe(true);
    const logged = lines.join('');
    expect(logged).toContain('"path":"/settings/api-keys"'); // the requests were logged...
    for (const s of [...secrets, c.cookie, csrf, 'hunter2-but-longer']) {
      expect(logged).not.toContain(s as string); // ...without any secret
    }
  });
});
