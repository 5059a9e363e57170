/**
 * `dpp-agent supervisor add --id ID --name NAME`: reads the supervisor's PIN (or badge code) on stdin and
 * adds `{ id, name, pinHash }` to the config file's `supervisors` (replacing the entry of the same id), so
 * the console can sign them in. The PIN is never written or printed; only its scrypt hash is kept.
 *
 *   dpp-agent supervisor add --id sup-ana --name "Ana Lima"           (asks for the PIN, hidden)
 *   printf '%s\n' "$PIN" | dpp-agent supervisor add --id sup-ana --name "Ana Lima"
 */
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_CONFIG_FILE, parseAgentConfig, type LoadedConfig } from '../config/index.js';
import { PIN_PATTERN, hashPin, verifyPin } from '../console/index.js';
import { AgentError } from '../errors.js';
import type { Output } from './output.js';

export interface SupervisorArgs {
  action?: string | undefined;
  id?: string | undefined;
  name?: string | undefined;
}

export const SUPERVISOR_USAGE =
  'usage: dpp-agent supervisor add --id ID --name NAME   (the PIN is read on stdin)';

export async function supervisorCommand(
  loaded: LoadedConfig,
  args: SupervisorArgs,
  readPin: (prompt: string) => Promise<string>,
  out: Output,
  cwd = process.cwd(),
): Promise<number> {
  if (args.action !== 'add' || !args.id || !args.name) {
    out.error(SUPERVISOR_USAGE);
    return 2;
  }
  const { id, name } = args;
  const pin = (await readPin(`PIN for ${name}: `)).trim();
  if (!PIN_PATTERN.test(pin))
    throw new AgentError('CONFIG_INVALID', 'a PIN is 4 to 64 visible characters (digits for the PIN pad)');
  // A PIN alone signs a supervisor in: two supervisors with the same PIN could not be told apart.
  for (const other of loaded.config.supervisors ?? [])
    if (other.id !== id && (await verifyPin(pin, other.pinHash)))
      throw new AgentError('CONFIG_INVALID', `supervisor ${other.id} already has this PIN; choose another`);

  const file = loaded.file ?? path.resolve(cwd, DEFAULT_CONFIG_FILE);
  const raw = existsSync(file) ? (JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>) : {};
  const before = Array.isArray(raw.supervisors) ? (raw.supervisors as Array<{ id?: unknown }>) : [];
  const entry = { id, name, pinHash: await hashPin(pin) };
  const replaced = before.some((s) => s.id === id);
  raw.supervisors = replaced ? before.map((s) => (s.id === id ? entry : s)) : [...before, entry];
  parseAgentConfig(raw, path.dirname(file)); // never write a file the agent would refuse
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(raw, null, 2) + '\n', { mode: 0o600 });
  await rename(tmp, file);
  out.line(`supervisor ${id} (${name}) ${replaced ? 'updated' : 'added'} in ${file}`);
  return 0;
}

/**
 * One line from stdin: typed with echo off (`*` per character) on a terminal, or the first line of what
 * is piped in.
 */
export async function readSecretLine(
  prompt: string,
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  if (!input.isTTY) {
    let text = '';
    for await (const chunk of input as AsyncIterable<Buffer | string>) {
      text += chunk.toString();
      if (text.includes('\n')) break;
    }
    return text.split(/\r?\n/)[0] ?? '';
  }
  output.write(prompt);
  input.setRawMode(true);
  input.setEncoding('utf8');
  input.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') {
            input.off('data', onData);
            return resolve(value);
          }
          if (ch === '\u0003') {
            input.off('data', onData);
            return reject(new AgentError('CONFIG_INVALID', 'cancelled'));
          }
          if (ch === '\u007f' || ch === '\b') {
            if (value.length > 0) {
              value = value.slice(0, -1);
              output.write('\b \b');
            }
          } else {
            value += ch;
            output.write('*');
          }
        }
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    output.write('\n');
  }
}
