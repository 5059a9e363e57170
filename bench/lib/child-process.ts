import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ControlPlaneProcess {
  url: string;
  tenantId: string;
  key: string;
  pid: number;
  /** Resident set size of the control-plane process now, in bytes (Linux /proc). */
  rss(): number;
  stop(): Promise<void>;
}

/** Reads VmRSS of a process from /proc (Linux), in bytes. */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

/** Starts `control-plane-process.ts` under tsx and waits for its first line. */
export async function startControlPlaneProcess(
  dialect: 'sqlite' | 'postgres' = 'sqlite',
): Promise<ControlPlaneProcess> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'control-plane-process.ts');
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, dialect], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // The load comes from one address: the per-IP budgets would measure themselves, not the server.
    env: {
      ...process.env,
      LOG_LEVEL: 'silent',
      IP_RATE_LIMITS: 'public=1000000000/60,credentials=1000000000/60,failures=1000000000/60',
    },
  });
  const first = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(buf.slice(0, nl));
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`control plane process exited with ${code}`)));
  });
  const info = JSON.parse(first) as { url: string; tenantId: string; key: string };
  const pid = child.pid!;
  return {
    ...info,
    pid,
    rss: () => rssOf(pid),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
