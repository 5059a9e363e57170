/** CUPS (through a real `lp`-compatible program) and the spool folder. */
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAgentError } from '../errors.js';
import { CupsTransport, parseLpRequestId } from './cups.js';
import { SpoolTransport } from './spool.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-transport-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** An executable that behaves like CUPS lp(1): records its arguments and stdin, answers the request id. */
async function fakeLp(exitCode = 0): Promise<string> {
  const file = path.join(dir, 'lp');
  await writeFile(
    file,
    `#!/bin/sh
printf '%s\\n' "$@" > "${dir}/args"
cat > "${dir}/stdin"
if [ ${exitCode} -ne 0 ]; then echo "lp: The printer or class does not exist." >&2; exit ${exitCode}; fi
echo "request id is $2-42 (1 file(s))"
`,
  );
  await chmod(file, 0o755);
  return file;
}

describe('CupsTransport', () => {
  it('sends the payload on stdin to lp -d <queue> and keeps the request id', async () => {
    const t = new CupsTransport({
      queue: 'office',
      command: await fakeLp(),
      options: ['-o', 'media=Custom.50x30mm'],
    });
    const payload = Buffer.from('%PDF-1.3 label');
    const receipt = await t.send(payload, 'job_1');
    expect(receipt).toEqual({ reference: 'office-42', bytes: payload.length });
    expect((await readFile(path.join(dir, 'args'), 'utf8')).trim().split('\n')).toEqual([
      '-d',
      'office',
      '-t',
      'job_1',
      '-o',
      'media=Custom.50x30mm',
      '--',
      '-',
    ]);
    expect(await readFile(path.join(dir, 'stdin'))).toEqual(payload);
  });

  it("fails with lp's message when lp fails, or when lp is missing", async () => {
    const t = new CupsTransport({ queue: 'nope', command: await fakeLp(1) });
    await expect(t.send(Buffer.from('x'), 'j')).rejects.toSatisfy(
      (e) => isAgentError(e, 'TRANSPORT_ERROR') && /does not exist/.test((e as Error).message),
    );
    const missing = new CupsTransport({ queue: 'q', command: path.join(dir, 'no-lp') });
    await expect(missing.send(Buffer.from('x'), 'j')).rejects.toSatisfy((e) =>
      isAgentError(e, 'TRANSPORT_ERROR'),
    );
  });

  it('parses the request id line of lp', () => {
    expect(parseLpRequestId('request id is zebra_raw-1234 (1 file(s))\n')).toBe('zebra_raw-1234');
    expect(parseLpRequestId('')).toBeNull();
  });
});

describe('SpoolTransport', () => {
  it('writes each label atomically under a safe name and leaves no temp file', async () => {
    const spool = path.join(dir, 'spool');
    const t = new SpoolTransport({ dir: spool, extension: 'zpl' });
    const receipt = await t.send(Buffer.from('^XA^XZ'), 'job_1/attempt:2');
    expect(receipt.reference).toBe('job_1_attempt_2.zpl');
    expect(await readdir(spool)).toEqual(['job_1_attempt_2.zpl']);
    expect(await readFile(path.join(spool, receipt.reference), 'utf8')).toBe('^XA^XZ');
  });
});
