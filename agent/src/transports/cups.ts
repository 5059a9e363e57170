/**
 * A CUPS queue through `lp -d <queue>`: the payload goes on stdin, and the job id comes back on stdout as
 * `request id is <queue>-<n> (1 file(s))` (CUPS lp(1)). One-way: CUPS accepting a job says nothing about
 * the paper, so a CUPS print is attested by a person.
 */
import { spawn } from 'node:child_process';
import { AgentError } from '../errors.js';
import type { PrinterTransport, SendReceipt } from './types.js';

export interface CupsTransportOptions {
  queue: string;
  /** The lp program (default `lp`). */
  command?: string;
  /** Extra options, e.g. ['-o', 'raw'] for ZPL through a raw queue. */
  options?: string[];
  timeoutMs?: number;
}

/** Parses lp's answer; null when it does not name a request id. */
export function parseLpRequestId(stdout: string): string | null {
  const m = /request id is (\S+)/.exec(stdout);
  return m ? m[1]! : null;
}

export class CupsTransport implements PrinterTransport {
  readonly kind = 'cups' as const;
  readonly link = null;

  constructor(private readonly options: CupsTransportOptions) {}

  get target(): string {
    return `cups:${this.options.queue}`;
  }

  send(data: Buffer, name: string): Promise<SendReceipt> {
    const command = this.options.command ?? 'lp';
    const args = ['-d', this.options.queue, '-t', name, ...(this.options.options ?? []), '--', '-'];
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new AgentError('TRANSPORT_ERROR', `${command} did not answer in time`));
      }, this.options.timeoutMs ?? 30_000);
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.stdin.on('error', () => {}); // lp exiting early; its exit code says why
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new AgentError('TRANSPORT_ERROR', `cannot run ${command}: ${err.message}`, { cause: err }));
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        const id = parseLpRequestId(stdout);
        if (code !== 0 || id === null) {
          reject(
            new AgentError(
              'TRANSPORT_ERROR',
              `${command} -d ${this.options.queue} failed (exit ${code}): ${stderr.trim() || stdout.trim()}`,
              {
                details: { exitCode: code },
              },
            ),
          );
          return;
        }
        resolve({ reference: id, bytes: data.length });
      });
      child.stdin.end(data);
    });
  }

  async close(): Promise<void> {}
}
