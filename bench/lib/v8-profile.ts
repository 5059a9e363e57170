/**
 * A V8 CPU profile of this thread, taken with the sampling profiler through `node:inspector` while a load
 * runs. The benches summarise it their own way (profile.ts by category and function, cpu-profile.ts by
 * owner, cost-profile.ts by named cost); `DPP_BENCH_PROFILE_DIR` keeps each whole profile as
 * `<name>.cpuprofile`, for Chrome DevTools or speedscope.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

/** A node of a V8 CPU profile (the inspector's Profiler.Profile), with the fields the summaries read. */
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds. */
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds between samples. */
  timeDeltas: number[];
}

/** Starts sampling every `intervalUs`; the function it returns stops and hands the profile back. */
export async function startProfiling(name: string, intervalUs = 500): Promise<() => Promise<CpuProfile>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async () => {
    try {
      const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
      const dir = process.env.DPP_BENCH_PROFILE_DIR;
      if (dir) {
        await mkdir(dir, { recursive: true });
        await writeFile(path.join(dir, `${name.replace(/\W+/g, '-')}.cpuprofile`), JSON.stringify(profile));
      }
      return profile;
    } finally {
      session.disconnect();
    }
  };
}
