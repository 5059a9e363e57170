import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { statCpuSeconds } from './proc-cpu.js';

export interface ControlPlaneProcess {
  url: string;
  /** The seeded tenant and its admin key (null for a replica that joined). */
  tenantId: string;
  key: string;
  /** On PostgreSQL, a DATABASE_URL that reaches this control plane's schema (for another replica). */
  databaseUrl: string | null;
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

/**
 * Starts `control-plane-process.ts` under tsx and waits for its first line: a fresh control plane, or with
 * `join` another replica on that DATABASE_URL; `mqttUrl` puts it on an external broker.
 */
export async function startControlPlaneProcess(
  dialect: 'sqlite' | 'postgres' = 'sqlite',
  opts: { join?: string; mqttUrl?: string; poolSize?: string } = {},
): Promise<ControlPlaneProcess> {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'control-plane-process.ts');
  const args = opts.join ? ['join', opts.join] : [dialect];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    // The load comes from one address: the per-IP budgets would measure themselves, not the server.
    env: {
      ...process.env,
      LOG_LEVEL: process.env.BENCH_CP_LOG_LEVEL ?? 'silent',
      IP_RATE_LIMITS: 'public=1000000000/60,credentials=1000000000/60,failures=1000000000/60',
      ...(opts.mqttUrl ? { BENCH_MQTT_URL: opts.mqttUrl } : {}),
      ...(opts.poolSize ? { DATABASE_POOL_SIZE: opts.poolSize } : {}),
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
  const info = JSON.parse(first) as Omit<ControlPlaneProcess, 'pid' | 'rss' | 'stop'>;
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

/** CPU seconds (user + system) a process has used, from /proc (Linux, 100 ticks a second). */
export function cpuSecondsOf(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`) ?? 0; // 0: the process ended
}

/** CPU seconds used by every process of this name (e.g. the PostgreSQL server's backends). */
export function cpuSecondsOfName(name: string): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) total += cpuSecondsOf(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
