/**
 * A pty pair made by socat: `socat -d -d pty,raw,echo=0,link=<host> pty,raw,echo=0,link=<dev>`.
 * The host (agent, test) opens the `host` link; the simulator opens the `dev` link. socat copies
 * bytes between the two; killing it is how a line is pulled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { SimError } from '../errors.js';

/** Every socat still running, killed if this process exits without closing them. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGTERM');
  });
}

export interface SocatPair {
  readonly pid: number;
  /** Resolves when socat has exited. */
  readonly exited: Promise<void>;
  kill(): Promise<void>;
}

/** Starts socat and resolves once both links exist and socat is copying. */
export async function startSocatPair(
  hostLink: string,
  devLink: string,
  timeoutMs = 5000,
): Promise<SocatPair> {
  installExitHook();
  const child = spawn(
    'socat',
    ['-d', '-d', `pty,raw,echo=0,link=${hostLink}`, `pty,raw,echo=0,link=${devLink}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  live.add(child);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      live.delete(child);
      resolve();
    });
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new SimError('SOCAT_FAILED', 'socat did not start in time', { details: { stderr } }));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new SimError('SOCAT_FAILED', 'socat could not be started (is it installed?)', { cause: err }));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new SimError('SOCAT_FAILED', `socat exited with ${String(code)}`, { details: { stderr } }));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('starting data transfer loop')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.stderr?.resume();
  return {
    pid: child.pid ?? -1,
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
