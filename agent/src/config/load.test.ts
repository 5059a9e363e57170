import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentError } from '../errors.js';
import { loadConfig, parseAgentConfig } from './load.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dpp-agent-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const zebra = {
  name: 'zebra-1',
  language: 'zpl',
  transport: { type: 'serial', path: '/dev/ttyUSB0', baudRate: 115200 },
  rfid: true,
  scanner: { link: { type: 'serial', path: '/dev/ttyACM0' } },
};

function write(obj: unknown, name = 'dpp-agent.json'): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof obj === 'string' ? obj : JSON.stringify(obj));
  return file;
}

describe('config', () => {
  it('fills the defaults and resolves dataDir from the file folder', () => {
    write({ printers: [zebra] });
    const { config, file } = loadConfig({ cwd: dir, env: {} });
    expect(file).toBe(path.join(dir, 'dpp-agent.json'));
    expect(config.dataDir).toBe(path.join(dir, 'dpp-agent-data'));
    expect(config.console).toEqual({ host: '127.0.0.1', port: 7878, enabled: true });
    const p = config.printers[0]!;
    expect(p).toMatchObject({ dpi: 203, attestation: 'auto', printTimeoutMs: 60_000 });
    expect(p.scanner).toMatchObject({ timeoutMs: 5000, retries: 1, link: { baudRate: 9600 } });
    expect(p.transport).toEqual({ type: 'serial', path: '/dev/ttyUSB0', baudRate: 115200 });
  });

  it('lets the environment override the file', () => {
    write({ controlPlaneUrl: 'http://a.example', console: { port: 1 }, printers: [zebra] });
    const { config } = loadConfig({
      cwd: dir,
      env: {
        DPP_AGENT_URL: 'http://b.example:8080',
        DPP_AGENT_CONSOLE_PORT: '0',
        DPP_AGENT_DATA_DIR: 'elsewhere',
        DPP_AGENT_MQTT: 'off',
        DPP_AGENT_LOG_LEVEL: 'debug',
        DPP_AGENT_POLL_INTERVAL_MS: '250',
      },
    });
    expect(config.controlPlaneUrl).toBe('http://b.example:8080');
    expect(config.console.port).toBe(0);
    expect(config.dataDir).toBe(path.join(dir, 'elsewhere'));
    expect(config.mqttEnabled).toBe(false);
    expect(config.logLevel).toBe('debug');
    expect(config.poll.intervalMs).toBe(250);
  });

  it('takes the file named by DPP_AGENT_CONFIG and refuses a named file that does not exist', () => {
    const file = write({ printers: [] }, 'other.json');
    expect(loadConfig({ cwd: '/', env: { DPP_AGENT_CONFIG: file } }).file).toBe(file);
    expect(() => loadConfig({ cwd: dir, file: 'nope.json', env: {} })).toThrow(/no such config file/);
  });

  it('runs on defaults alone when no file exists', () => {
    const { config, file } = loadConfig({ cwd: dir, env: {} });
    expect(file).toBeNull();
    expect(config.printers).toEqual([]);
  });

  it.each([
    [{ printers: [{ ...zebra, transport: { type: 'serial' } }] }, /printers\[0\]\.transport\.path/],
    [{ printers: [{ ...zebra, name: 'a/b' }] }, /printers\[0\]\.name: must not contain/],
    [
      { printers: [{ ...zebra, transport: { type: 'usb', path: '/dev/usb/lp0' } }] },
      /transport\.serialNumber/,
    ],
    [
      { printers: [{ ...zebra, transport: { type: 'usb', serialNumber: 'X1', vendorId: 'zebra' } }] },
      /transport\.vendorId: must be four hex digits as lsusb shows them/,
    ],
    [{ printers: [zebra, zebra] }, /printers\[1\]\.name: duplicate name zebra-1/],
    [{ printers: [{ ...zebra, language: 'pdf' }] }, /printers\[0\]\.rfid: RFID needs a ZPL printer/],
    [
      { printers: [{ ...zebra, rfid: false, nfc: true, language: 'pdf' }] },
      /printers\[0\]\.nfc: NFC needs a ZPL printer/,
    ],
    [{ console: { host: '0.0.0.0' } }, /console\.host/],
    [{ surprise: true }, /surprise/],
  ])('fails with one line naming the file and the field (%#)', (obj, pattern) => {
    write(obj);
    try {
      loadConfig({ cwd: dir, env: {} });
      expect.unreachable();
    } catch (err) {
      expect(isAgentError(err, 'CONFIG_INVALID')).toBe(true);
      const message = (err as Error).message;
      expect(message).toMatch(pattern);
      expect(message.startsWith(path.join(dir, 'dpp-agent.json'))).toBe(true);
      expect(message).not.toContain('\n');
    }
  });

  it('refuses broken JSON and bad environment values in one line', () => {
    write('{ nope');
    expect(() => loadConfig({ cwd: dir, env: {} })).toThrow(/not valid JSON/);
    write({});
    expect(() => loadConfig({ cwd: dir, env: { DPP_AGENT_CONSOLE_PORT: 'x' } })).toThrow(
      /DPP_AGENT_CONSOLE_PORT: must be a whole number/,
    );
    expect(() => loadConfig({ cwd: dir, env: { DPP_AGENT_MQTT: 'maybe' } })).toThrow(/on or off/);
  });

  it('names a USB printer by its serial number, its ids as numbers or as lsusb shows them', () => {
    const usb = (transport: Record<string, unknown>) =>
      parseAgentConfig({ printers: [{ ...zebra, transport: { type: 'usb', ...transport } }] }).printers[0]!
        .transport;
    expect(usb({ serialNumber: 'D8N231500123' })).toEqual({
      type: 'usb',
      serialNumber: 'D8N231500123',
      backend: 'auto',
    });
    expect(usb({ serialNumber: 'D8N', vendorId: '0a5f', productId: '0x0166', backend: 'usblp' })).toEqual({
      type: 'usb',
      serialNumber: 'D8N',
      vendorId: 0x0a5f,
      productId: 0x0166,
      backend: 'usblp',
    });
    expect(usb({ serialNumber: 'D8N', vendorId: 2655 })).toMatchObject({ vendorId: 0x0a5f });
    expect(() => usb({ serialNumber: 'D8N', vendorId: 0x10000 })).toThrow(/vendorId/);
    expect(() => usb({ serialNumber: 'D8N', backend: 'cups' })).toThrow(/backend/);
  });

  it('validates an in-memory configuration for library use', () => {
    expect(parseAgentConfig({ dataDir: 'd' }, '/base').dataDir).toBe('/base/d');
    expect(() => parseAgentConfig({ printers: 'x' })).toThrow(/^config: printers/);
  });
});
