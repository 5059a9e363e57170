import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '@dpp/agent';
import { consoleUiDir, desktopConfigFile } from './paths.js';
import { consoleWebPreferences, isConsoleUrl, requestAllowed, withConsoleHeaders } from './security.js';

const ORIGIN = 'http://127.0.0.1:7878';

describe('the console window', () => {
  it('is sandboxed and context-isolated, without Node, webviews or insecure content', () => {
    expect(consoleWebPreferences('/app/dist/preload.cjs')).toMatchObject({
      preload: '/app/dist/preload.cjs',
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      sandbox: true,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it('stays on the console origin', () => {
    expect(isConsoleUrl(`${ORIGIN}/`, ORIGIN)).toBe(true);
    expect(isConsoleUrl(`${ORIGIN}/#/jobs/job_1`, ORIGIN)).toBe(true);
    for (const url of [
      'http://127.0.0.1:7879/',
      'https://127.0.0.1:7878/',
      'http://localhost:7878/',
      'https://evil.example/',
      'file:///etc/passwd',
      'javascript:alert(1)',
      '::',
    ])
      expect(isConsoleUrl(url, ORIGIN), url).toBe(false);
    expect(requestAllowed(`${ORIGIN}/api/events`, ORIGIN)).toBe(true);
    expect(requestAllowed('data:image/png;base64,iVBORw0KGgo=', ORIGIN)).toBe(true);
    expect(requestAllowed('https://fonts.example/x.woff2', ORIGIN)).toBe(false);
  });

  it('puts the console CSP and nosniff on every answer, replacing any other spelling', () => {
    const out = withConsoleHeaders({
      'content-type': ['text/html'],
      'Content-Security-Policy': ['default-src *'],
      'x-content-type-options': 'sniff',
    });
    expect(out).toEqual({
      'content-type': ['text/html'],
      'Content-Security-Policy': [CONSOLE_CSP],
      'X-Content-Type-Options': ['nosniff'],
    });
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(withConsoleHeaders(undefined)['Content-Security-Policy']).toEqual([CONSOLE_CSP]);
  });
});

describe('desktop paths', () => {
  it('takes the config from --config, then DPP_AGENT_CONFIG, then the user-data folder', () => {
    const data = '/home/ana/.config/DPP Print Floor';
    expect(desktopConfigFile(['electron', 'desktop', '--config', 'floor.json'], {}, data, '/work')).toBe(
      '/work/floor.json',
    );
    expect(
      desktopConfigFile(['app', '--config=/etc/dpp/agent.json'], { DPP_AGENT_CONFIG: 'x.json' }, data),
    ).toBe('/etc/dpp/agent.json');
    expect(desktopConfigFile(['app'], { DPP_AGENT_CONFIG: 'x.json' }, data, '/work')).toBe('/work/x.json');
    expect(desktopConfigFile(['app', '--config'], {}, data)).toBe(path.join(data, 'dpp-agent.json'));
  });

  it('finds the console page in the installed resources, or beside main.cjs', () => {
    expect(consoleUiDir({ isPackaged: true, resourcesPath: '/opt/dpp/resources', mainDir: '/x' })).toBe(
      '/opt/dpp/resources/console-ui',
    );
    expect(consoleUiDir({ isPackaged: false, resourcesPath: '/r', mainDir: '/repo/desktop/dist' })).toBe(
      '/repo/desktop/dist/console-ui',
    );
  });
});
