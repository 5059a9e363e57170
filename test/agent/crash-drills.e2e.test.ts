/**
 * Crash drills at the size of a real run, on each database: 120 labels; the agent killed with SIGKILL mid-run
 * and started again on the same data folder; then the printer line dropped right after a label came out,
 * three times. A test supervisor answers the console as a person at the printer would: a label of that serial
 * lies in the output tray, so they attest it; none, so they ask for a re-print. Every serial ends SEALED,
 * sealed once, and no label comes out twice. (The control plane killed mid-run: test/operations.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import type { Agent } from '@dpp/agent';
import { agentProcess, kill } from './support/agent-process.js';
import { startFloor, type Floor } from './support/floor.js';
import { printableProduct, queueJobs } from './support/journey.js';
import { checkOutcomes, waitFinished } from './support/outcomes.js';

const LABELS = 120;
const PRINTER = 'zebra-crash';

describe.each(testDialects())('crash drills with %s, 120 labels', (dialect) => {
  let t: TestControlPlane;
  let floor: Floor | null = null;
  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect,
      mqtt: true,
      env: { PORT: String(await freePort()), AIDC_LEASE_SECONDS: '12', AIDC_REAPER_INTERVAL_MS: '250' },
    });
  });
  afterAll(async () => {
    await floor?.close();
    await t?.close();
  });

  it(
    'agent killed mid-run, then the line dropped after three labels: each serial out once, sealed once',
    { timeout: 300_000 },
    async () => {
      const key = t.tenants.a.admin;
      const product = await printableProduct(t, key, LABELS);
      floor = await startFloor(t, key, { printers: [{ name: PRINTER, rfid: true }], start: false });
      const sim = floor.printers[PRINTER]!;
      let formats = 0;
      sim.events.on('formatReceived', ({ formatIndex }) => (formats = Math.max(formats, formatIndex)));

      const child = agentProcess(floor.configFile);
      try {
        await queueJobs(t, key, product, { printer: PRINTER });
        await sim.waitForLabels(30, 120_000);
      } finally {
        await kill(child);
      }
      for (const n of [10, 40, 70]) sim.faults.scriptLabel(formats + n, 'dropAfterPrint');
      const agent = await floor.startAgent();
      const answered = new Set<string>();
      const supervisor = setInterval(() => supervise(agent, sim.labels, answered), 200);
      try {
        await waitFinished(t, key, product, 240_000);
      } finally {
        clearInterval(supervisor);
      }

      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(LABELS);
      expect([...o.goodLabels.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      expect(answered.size).toBeGreaterThanOrEqual(3); // the drops went to the supervisor, not to a re-print
    },
  );
});

/** A person at the printer: attests a job waiting for them when its label is in the tray, else re-prints. */
function supervise(
  agent: Agent,
  labels: readonly { void: boolean; content: string | null }[],
  answered: Set<string>,
): void {
  const status = agent.status();
  for (const job of status.jobs.current) {
    if (job.waitingFor !== 'attestation') continue;
    const serial = status.jobs.recent.find((r) => r.jobRef === job.jobRef)?.serial;
    if (!serial) continue;
    const inTray = labels.some(
      (l) => !l.void && l.content !== null && new RegExp(`/21/${serial}(?:[?#]|$)`).test(l.content),
    );
    try {
      if (inTray) agent.attest(job.jobRef, { id: 'sup-1', name: 'Ana' }, 'label found in the tray');
      else agent.reprint(job.jobRef);
      answered.add(job.attemptId);
    } catch {
      // It stopped waiting meanwhile.
    }
  }
}
