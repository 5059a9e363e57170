import { describe, expect, it } from 'vitest';
import { createDesktopBridge } from './bridge.js';
import { IPC_CHANNELS, type DesktopInfo, type ThemeSource } from './ipc-contract.js';
import { IPC_ARGUMENTS, IpcError, createIpcHandlers, type IpcSender } from './ipc.js';

const ORIGIN = 'http://127.0.0.1:7878';
const INFO: DesktopInfo = {
  appVersion: '0.1.0',
  electronVersion: '38.8.6',
  agentVersion: '0.1.0',
  platform: 'linux',
};

function setUp() {
  const themes: ThemeSource[] = [];
  const handlers = createIpcHandlers({
    consoleOrigin: ORIGIN,
    info: () => INFO,
    setTheme: (t) => themes.push(t),
  });
  return { handlers, themes };
}

const page: IpcSender = { url: `${ORIGIN}/#/jobs/job_1` };

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IpcError);
  return (err as IpcError).code;
}

describe('the IPC surface of the main process', () => {
  it('answers exactly the channels of the contract, each with an argument schema', () => {
    const { handlers } = setUp();
    expect(Object.keys(handlers).sort()).toEqual(Object.values(IPC_CHANNELS).sort());
    expect(Object.keys(IPC_ARGUMENTS).sort()).toEqual(Object.values(IPC_CHANNELS).sort());
    expect(Object.values(IPC_CHANNELS).every((c) => c.startsWith('dpp:'))).toBe(true);
  });

  it('gives the console page the versions, and sets the theme it asks for', async () => {
    const { handlers, themes } = setUp();
    expect(await handlers[IPC_CHANNELS.info](page, [])).toEqual(INFO);
    for (const t of ['dark', 'light', 'system'] as const)
      expect(await handlers[IPC_CHANNELS.setTheme](page, [t])).toBe(t);
    expect(themes).toEqual(['dark', 'light', 'system']);
  });

  it('refuses arguments that are not the contract: wrong value, type or count', async () => {
    const { handlers, themes } = setUp();
    for (const args of [['purple'], [42], [], ['dark', 'extra'], [{ theme: 'dark' }]])
      expect(await refusal(handlers[IPC_CHANNELS.setTheme](page, args))).toBe('INVALID_ARGUMENTS');
    expect(await refusal(handlers[IPC_CHANNELS.info](page, ['x']))).toBe('INVALID_ARGUMENTS');
    expect(themes).toEqual([]);
  });

  it('answers only the console page: another origin, a file, an unknown sender are refused', async () => {
    const { handlers, themes } = setUp();
    for (const url of [
      'http://127.0.0.1:7879/',
      'http://localhost:7878/',
      'https://evil.example/',
      'file:///etc/passwd',
      'not a url',
      '',
      null,
      undefined,
    ]) {
      expect(await refusal(handlers[IPC_CHANNELS.info]({ url }, [])), String(url)).toBe('FORBIDDEN_SENDER');
      expect(await refusal(handlers[IPC_CHANNELS.setTheme]({ url }, ['dark']))).toBe('FORBIDDEN_SENDER');
    }
    expect(themes).toEqual([]);
  });
});

describe('window.dppDesktop (the preload bridge)', () => {
  it('offers info() and setTheme() only, frozen, and sends each on its own channel', async () => {
    const sent: Array<[string, unknown[]]> = [];
    const bridge = createDesktopBridge(async (channel, ...args) => {
      sent.push([channel, args]);
      return channel === IPC_CHANNELS.info ? INFO : args[0];
    });
    expect(Object.keys(bridge).sort()).toEqual(['info', 'setTheme']);
    expect(Object.isFrozen(bridge)).toBe(true);
    expect(await bridge.info()).toEqual(INFO);
    expect(await bridge.setTheme('dark')).toBe('dark');
    // Extra arguments from the page never reach the main process.
    await (bridge.setTheme as (...a: unknown[]) => Promise<unknown>)('light', { evil: true });
    expect(sent).toEqual([
      ['dpp:info', []],
      ['dpp:set-theme', ['dark']],
      ['dpp:set-theme', ['light']],
    ]);
  });

  it('works end to end against the handlers, and bad input from the page is refused there', async () => {
    const { handlers, themes } = setUp();
    const bridge = createDesktopBridge((channel, ...args) => {
      const handle = handlers[channel as keyof typeof handlers];
      return handle ? handle(page, args) : Promise.reject(new Error(`no handler for ${channel}`));
    });
    expect(await bridge.info()).toEqual(INFO);
    expect(await bridge.setTheme('dark')).toBe('dark');
    expect(await refusal(bridge.setTheme('neon' as ThemeSource))).toBe('INVALID_ARGUMENTS');
    expect(themes).toEqual(['dark']);
  });
});
