import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/index.js';
import { verifyPin } from '../console/index.js';
import { isAgentError } from '../errors.js';
import { main } from './index.js';
import { readSecretLine, supervisorCommand } from './supervisor.js';

let dir: string;
let file: string;
const out = () => {
  const o = { lines: [] as string[], errors: [] as string[] };
  return { o, output: { line: (t = '') => o.lines.push(t), error: (t: string) => o.errors.push(t) } };
};
const pinOf = (pin: string) => async () => `${pin}\n`;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-supervisor-'));
  file = path.join(dir, 'dpp-agent.json');
  await writeFile(file, JSON.stringify({ dataDir: './data', poll: { intervalMs: 250 } }));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const config = async () => JSON.parse(await readFile(file, 'utf8'));
const load = () => loadConfig({ cwd: dir, env: {} });

describe('dpp-agent supervisor add', () => {
  it('adds a supervisor with the hash of the PIN read on stdin, keeping the rest of the file', async () => {
    const { o, output } = out();
    expect(
      await supervisorCommand(
        load(),
        { action: 'add', id: 'sup-ana', name: 'Ana Lima' },
        pinOf('2468'),
        output,
      ),
    ).toBe(0);
    expect(o.lines).toEqual([`supervisor sup-ana (Ana Lima) added in ${file}`]);
    const written = await config();
    expect(written).toMatchObject({ dataDir: './data', poll: { intervalMs: 250 } });
    expect(written.supervisors).toHaveLength(1);
    expect(written.supervisors[0]).toMatchObject({ id: 'sup-ana', name: 'Ana Lima' });
    expect(JSON.stringify(written)).not.toContain('2468');
    expect(await verifyPin('2468', written.supervisors[0].pinHash)).toBe(true);
    expect((await stat(file)).mode & 0o077).toBe(0);
    expect(load().config.supervisors).toHaveLength(1); // the agent accepts it
  });

  it('replaces the PIN of the same id, and refuses a PIN another supervisor has', async () => {
    const { output } = out();
    await supervisorCommand(
      load(),
      { action: 'add', id: 'sup-ana', name: 'Ana Lima' },
      pinOf('2468'),
      output,
    );
    await supervisorCommand(load(), { action: 'add', id: 'sup-bo', name: 'Bo Chen' }, pinOf('1357'), output);
    await expect(
      supervisorCommand(load(), { action: 'add', id: 'sup-cy', name: 'Cy' }, pinOf('2468'), output),
    ).rejects.toThrow(/supervisor sup-ana already has this PIN/);
    const { o, output: o2 } = out();
    await supervisorCommand(load(), { action: 'add', id: 'sup-ana', name: 'Ana L.' }, pinOf('8642'), o2);
    expect(o.lines[0]).toMatch(/updated/);
    const { supervisors } = await config();
    expect(supervisors.map((s: { id: string; name: string }) => [s.id, s.name])).toEqual([
      ['sup-ana', 'Ana L.'],
      ['sup-bo', 'Bo Chen'],
    ]);
    expect(await verifyPin('8642', supervisors[0].pinHash)).toBe(true);
    expect(await verifyPin('2468', supervisors[0].pinHash)).toBe(false);
  });

  it('refuses a short PIN and missing arguments', async () => {
    const { o, output } = out();
    await expect(
      supervisorCommand(load(), { action: 'add', id: 'a', name: 'A' }, pinOf('12'), output),
    ).rejects.toSatisfy((e) => isAgentError(e, 'CONFIG_INVALID'));
    expect(await supervisorCommand(load(), { action: 'add', name: 'A' }, pinOf('2468'), output)).toBe(2);
    expect(
      await supervisorCommand(load(), { action: 'remove', id: 'a', name: 'A' }, pinOf('2468'), output),
    ).toBe(2);
    expect(o.errors[0]).toMatch(/usage: dpp-agent supervisor add --id ID --name NAME/);
    expect((await config()).supervisors).toBeUndefined();
  });

  it('is listed in the usage', async () => {
    const { o, output } = out();
    expect(await main(['--help'], output)).toBe(0);
    expect(o.lines.join('\n')).toMatch(/supervisor add --id ID --name NAME/);
  });

  it('reads the first line of a PIN piped in', async () => {
    const input = new PassThrough() as unknown as NodeJS.ReadStream;
    const reading = readSecretLine('PIN: ', input, new PassThrough());
    (input as unknown as PassThrough).end('2468\nrest\n');
    expect(await reading).toBe('2468');
  });
});
