import type { PrinterStatus } from '@dpp/shared';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { waitReady } from './printer-steps.js';
import type { RunContext } from './run-context.js';
import type { JobStep } from './steps.js';

const status = (ready: boolean): PrinterStatus =>
  ({ ready, paused: !ready, errors: ready ? [] : ['paused'] }) as unknown as PrinterStatus;

/** A run whose printer answers `answers` in turn, with its time split as the pipeline splits it. */
function runWith(answers: PrinterStatus[], notReadyRetryMs: number) {
  const spent = { device: 0, human: 0 };
  const steps: JobStep[] = [];
  let step: JobStep = 'rendered';
  const run = {
    jobRef: 'job_1',
    signal: new AbortController().signal,
    log: silentLogger,
    deps: {
      now: Date.now,
      notReadyRetryMs,
      printerConfig: { name: 'zebra-1', readyTimeoutMs: 10_000 },
      printer: { status: () => Promise.resolve(answers.shift() ?? status(true)) },
      onPrinterStatus: () => undefined,
    },
    step: () => step,
    setStep: (s: JobStep) => steps.push((step = s)),
    timed: async <T>(kind: 'device' | 'human', fn: () => Promise<T>) => {
      const t0 = performance.now();
      try {
        return await fn();
      } finally {
        spent[kind] += performance.now() - t0;
      }
    },
  } as unknown as RunContext;
  return { run, spent, steps };
}

describe('waitReady', () => {
  it('counts the wait for a printer that is not ready as the printer time of the job, not the agent time', async () => {
    const { run, spent, steps } = runWith([status(false), status(false), status(true)], 60);
    await waitReady(run);
    expect(steps).toEqual(['waiting_printer']);
    // Two waits of 60 ms between three status calls: the printer's time (the status calls alone take none here).
    expect(spent.device).toBeGreaterThanOrEqual(115);
    expect(spent.human).toBe(0);
  });
});
