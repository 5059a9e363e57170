/**
 * CPU time from Linux's /proc: a process's (all its threads) or the calling thread's own. Elsewhere (no
 * /proc) every reading is null, and the benchmarks leave out what they would print from it.
 */
import { readFileSync } from 'node:fs';

/** The CPU seconds (user and system) a /proc `stat` file reports, or null when it cannot be read. */
export function statCpuSeconds(file: string): number | null {
  try {
    const stat = readFileSync(file, 'utf8');
    // The fields after the command's name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/** The CPU seconds the calling thread (the main thread or a worker) has used, or null without /proc. */
export const threadCpuSeconds = (): number | null => statCpuSeconds('/proc/thread-self/stat');

/** The CPU seconds this whole process (every thread) has used, or null without /proc. */
export const processCpuSeconds = (): number | null => statCpuSeconds('/proc/self/stat');
