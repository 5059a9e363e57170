/**
 * Failure drills of issue 9, each on a real control plane, the agent and simulated devices on real ptys:
 * paper out mid-run, an RFID void tag, a smudged label, the agent killed mid-job (cut off past its lease,
 * or resumed within it). In each, every serial ends SEALED or in the re-print file, never lost, never sealed
 * twice (`checkOutcomes`). Outages of the control plane and the broker are in outages.e2e.test.ts.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { openAgentDatabase, type JobStepEvent, type OutboxRow } from '@dpp/agent';
import { startFloor, type Floor, type FloorPrinter } from './support/floor.js';
import {
  jobDetail,
  printableProduct,
  queueJobs,
  type Json,
  type PrintableProduct,
} from './support/journey.js';
import { checkOutcomes, failureReasons, waitFinished } from './support/outcomes.js';
import { startProxy } from './support/proxy.js';
import { agentProcess, kill } from './support/agent-process.js';

/** Short leases and a busy reaper, so a dead agent's lease runs out within the test. */
// 12 s: heartbeats (every lease / 3) keep up even on a loaded 2-core CI runner running suites in parallel.
const AIDC_ENV = { AIDC_LEASE_SECONDS: '12', AIDC_REAPER_INTERVAL_MS: '250' };

describe.each(testDialects())('failure drills (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let floor: Floor | null = null;
  /**
   * Each drill has its own printer and binds its jobs to it, so a job another drill left behind (failed by
   * an agent that stopped mid-job) is never claimed here and counts stay exact.
   */
  let drill = 0;

  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect,
      mqtt: true,
      env: { PORT: String(await freePort()), ...AIDC_ENV },
    });
    key = t.tenants.a.admin;
  });
  afterEach(async () => {
    await floor?.close();
    floor = null;
  });
  afterAll(() => t?.close());

  async function setUp(
    count: number,
    printer: Omit<FloorPrinter, 'name'> = {},
    agent: Parameters<typeof startFloor>[2]['agent'] = {},
    start = true,
    now?: () => number,
  ): Promise<{ product: PrintableProduct; name: string; floor: Floor }> {
    const name = `zebra-d${++drill}`;
    const product = await printableProduct(t, key, count);
    floor = await startFloor(t, key, {
      printers: [{ name, rfid: true, ...printer }],
      agent,
      start,
      ...(now ? { now } : {}),
    });
    return { product, name, floor };
  }

  const queue = (product: PrintableProduct, name: string) => queueJobs(t, key, product, { printer: name });

  it('paper out mid-run: the job waits with its lease, or fails and is printed again; nothing lost or doubled', async () => {
    const { product, name, floor } = await setUp(8, { config: { printTimeoutMs: 2500 } });
    const sim = floor.printers[name]!;
    // Paper runs out as the 3rd label arrives (held in the buffer) and comes back 1 s later: the job waits.
    // It runs out again on the 6th and stays out past printTimeoutMs: that job fails, its held format is
    // cancelled, and it is claimed again once paper is back.
    sim.events.on('formatReceived', ({ formatIndex }) => {
      if (formatIndex === 3) {
        sim.faults.set('paperOut', true);
        setTimeout(() => sim.faults.set('paperOut', false), 1000);
      }
      if (formatIndex === 6) {
        sim.faults.set('paperOut', true);
        setTimeout(() => sim.faults.set('paperOut', false), 4000);
      }
    });
    await queue(product, name);
    await waitFinished(t, key, product, 90_000);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(8);
    expect(await failureReasons(t, key, o)).toEqual(['print_timeout']);
    expect([...o.goodLabels.values()].every((n) => n === 1)).toBe(true); // the cancelled format never printed
    expect(sim.labels).toHaveLength(8);
  });

  it('printer paused as a claimed job comes to it: the job waits at the send gate, and the wait is the printer time', async () => {
    // The agent's clock is the wall clock plus what the test adds: a jump made while the job waits counts exactly.
    let added = 0;
    const { product, name, floor } = await setUp(1, {}, {}, true, () => Date.now() + added);
    const sim = floor.printers[name]!;
    const JUMP_MS = 5_000;
    // Paused the moment the job is claimed: it renders, then waits for the printer at its gate, where it stays
    // until the test resumes the printer. The clock jumps while it waits there (in its status calls or the
    // pauses between them, which are the printer's time), and the printer resumes after.
    const steps: JobStepEvent[] = [];
    floor.agent!.events.on('job', (e) => {
      steps.push(e);
      if (e.step === 'claimed') sim.faults.set('paused', true);
      if (e.step === 'waiting_printer' && added === 0) {
        setTimeout(() => {
          added = JUMP_MS;
          setTimeout(() => sim.faults.set('paused', false), 100);
        }, 1);
      }
    });
    await queue(product, name);
    await waitFinished(t, key, product, 60_000);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(1);
    expect(steps.map((e) => e.step)).toContain('waiting_printer');
    expect(added).toBe(JUMP_MS);
    // The time the clock jumped is in the job's printer time (the agent's own is the rest of its total).
    const sealed = steps.find((e) => e.step === 'sealed')!;
    expect(sealed.timings!.deviceMs).toBeGreaterThanOrEqual(JUMP_MS);
  });

  it('RFID void tag: VOID labels, the held format cancelled, the job printed again after the operator clears', async () => {
    const { product, name, floor } = await setUp(5);
    const sim = floor.printers[name]!;
    sim.faults.scriptLabel(2, 'voidTag');
    sim.events.on('rfidError', () => setTimeout(() => sim.resume(), 500)); // the operator clears the error
    await queue(product, name);
    await waitFinished(t, key, product, 60_000);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(5);
    expect(sim.labels.filter((l) => l.void)).toHaveLength(3);
    expect(await failureReasons(t, key, o)).toEqual(['rfid_void']);
    expect([...o.goodLabels.values()].every((n) => n === 1)).toBe(true);
  });

  it('smudged label: NOREAD fails the scan, the label is printed again and sealed', async () => {
    const { product, name, floor } = await setUp(4);
    const sim = floor.printers[name]!;
    sim.faults.scriptLabel(3, 'smudged');
    await queue(product, name);
    await waitFinished(t, key, product, 60_000);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(4);
    expect(await failureReasons(t, key, o)).toEqual(['scan_noread']);
    expect(sim.labels).toHaveLength(5); // the smudged one stays unreadable and unsealed
  });

  it(
    'printer line drops right after a label comes out: the printer holds nothing, so a supervisor decides; never printed twice',
    { timeout: 120_000 },
    async () => {
      const { product, name, floor } = await setUp(3);
      const sim = floor.printers[name]!;
      sim.faults.scriptLabel(2, 'dropAfterPrint');
      const refs = await queue(product, name);
      const ref = refs[1]!;
      const agent = floor.agent!;
      const current = () => agent.status().jobs.current.find((j) => j.jobRef === ref);
      // The agent asks the printer once the line is back: it holds no format, so the label may be out.
      await expect.poll(() => current()?.waitingFor ?? null, { timeout: 60_000 }).toBe('attestation');
      expect(sim.labels).toHaveLength(2);
      expect((await jobDetail(t, key, ref)).state).toBe('SPOOL_SUBMITTED');
      // Well past the printer's and the lease's timeouts, nothing is printed again on the system's say.
      await new Promise((r) => setTimeout(r, 3000));
      expect(sim.labels).toHaveLength(2);
      agent.attest(ref, { id: 'sup-1', name: 'Ana' }, 'the label is on the product');
      await waitFinished(t, key, product, 60_000);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(3);
      expect(await failureReasons(t, key, o)).toEqual([]);
      expect(o.jobs.get(product.serials[1]!)!.attemptCount).toBe(1);
      expect([...o.goodLabels.values()]).toEqual([1, 1, 1]);
      const job = await jobDetail(t, key, ref);
      const attestation = job.evidence.find((e: Json) => e.kind === 'attestation').payload;
      expect(attestation).toMatchObject({ actor: { type: 'human', id: 'sup-1' }, method: 'supervisor' });
      expect(attestation.note).toMatch(/printer link failed after the label was sent/);
    },
  );

  it(
    'agent stopped (SIGTERM) while its label may be out: no FAILED, the next start resumes the attempt',
    { timeout: 120_000 },
    async () => {
      const { product, name, floor } = await setUp(1, { config: { attestation: 'human' } });
      const sim = floor.printers[name]!;
      const [ref] = (await queue(product, name)) as [string];
      const first = floor.agent!;
      const waiting = (a: typeof first) =>
        a.status().jobs.current.find((j) => j.jobRef === ref)?.waitingFor ?? null;
      await expect.poll(() => waiting(first), { timeout: 60_000 }).toBe('attestation');
      await first.stop();
      // A FAILED here would have the label printed again on the system's say.
      expect((await jobDetail(t, key, ref)).state).toBe('SPOOL_SUBMITTED');
      const agent = await floor.startAgent();
      await expect.poll(() => waiting(agent), { timeout: 20_000 }).toBe('attestation');
      agent.attest(ref, { id: 'sup-1', name: 'Ana' });
      await waitFinished(t, key, product, 60_000);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(1);
      expect(o.jobs.get(product.serials[0]!)!.attemptCount).toBe(1);
      expect(sim.labels).toHaveLength(1);
    },
  );

  it(
    'agent killed mid-job and cut off: its lease runs out, yet the label is never printed again; the restarted agent seals it on the same attempt',
    { timeout: 120_000 },
    async () => {
      const proxy = await startProxy(Number(new URL(t.url).port));
      const { product, name, floor } = await setUp(3, {}, { controlPlaneUrl: proxy.url }, false);
      const sim = floor.printers[name]!;
      // The agent in its own process; cut from the control plane as its 2nd label reaches the printer, so
      // that label's later results wait in its outbox; then killed with SIGKILL.
      const child = agentProcess(floor.configFile);
      try {
        sim.events.on('formatReceived', ({ formatIndex }) => {
          if (formatIndex === 2) proxy.cut();
        });
        await queue(product, name);
        await sim.waitForLabels(2, 60_000);
        await new Promise((r) => setTimeout(r, 1500)); // it attests and scans; its results pile up
        await kill(child);
        const db = openAgentDatabase(path.join(floor.dataDir, 'agent.sqlite'));
        const pending = db
          .prepare("select * from outbox where state = 'pending' order by id")
          .all() as OutboxRow[];
        db.close();
        // The steps after the cut, from whichever the control plane missed first, up to SEALED.
        const steps = ['SPOOL_SUBMITTED', 'PRINTED_ATTESTED', 'SCAN_VERIFIED', 'SEALED'];
        expect(pending.length).toBeGreaterThanOrEqual(2);
        expect(pending.map((r) => r.status)).toEqual(steps.slice(steps.length - pending.length));
        const dead = pending[0]!;

        // The lease runs out and the reaper passes many times: the device opened the send gate before the
        // bytes went out, so the job stays with its attempt whether or not SPOOL_SUBMITTED got through.
        const detail = () => jobDetail(t, key, dead.job_ref);
        const leaseEnd = Date.parse(((await detail()).leaseExpiresAt as string | null) ?? '');
        expect(leaseEnd).toBeGreaterThan(0);
        await new Promise((r) => setTimeout(r, Math.max(0, leaseEnd - Date.now()) + 2000));
        const held = await detail();
        expect(['RENDERED', 'SPOOL_SUBMITTED', 'PRINTED_ATTESTED']).toContain(held.state);
        expect(held.attemptId).toBe(dead.attempt_id);
        expect(held.attemptCount).toBe(1);

        // The network comes back, and the agent (same data folder) starts again: it resumes the attempt
        // past its lease and its outbox delivers what it owes.
        proxy.restore();
        const agent = await floor.startAgent();
        await waitFinished(t, key, product, 60_000);
        await expect.poll(() => agent.outbox.counts().pending, { timeout: 10_000 }).toBe(0);
        const rows = agent.outbox.rowsOf(dead.job_ref).filter((r) => r.attempt_id === dead.attempt_id);
        expect(rows.map((r) => r.state)).toEqual(rows.map(() => 'delivered'));
        expect(rows.map((r) => r.status)).toEqual(['RENDERED', ...steps]);

        const o = await checkOutcomes(t, key, product, [sim]);
        expect(o.sealed).toHaveLength(3);
        expect(o.jobs.get(product.serials[1]!)!.attemptCount).toBe(1);
        expect(await failureReasons(t, key, o)).toEqual([]);
        expect([...o.goodLabels.values()]).toEqual([1, 1, 1]);
        expect(sim.labels).toHaveLength(3);
      } finally {
        await kill(child);
        await proxy.close();
      }
    },
  );

  it(
    'agent killed while its label is held in the printer: the restarted agent clears it before it can print',
    { timeout: 120_000 },
    async () => {
      const { product, name, floor } = await setUp(2, {}, {}, false);
      const sim = floor.printers[name]!;
      const child = agentProcess(floor.configFile);
      try {
        sim.events.on('formatReceived', ({ formatIndex }) => {
          if (formatIndex === 1) sim.faults.set('paperOut', true); // held in the buffer
        });
        await queue(product, name);
        await expect.poll(() => sim.status().formatsInBuffer, { timeout: 30_000 }).toBe(1);
        await kill(child);
        const dropped: number[] = [];
        sim.events.on('formatDropped', (e) => dropped.push(e.formatIndex));
        await floor.startAgent();
        await expect.poll(() => dropped).toEqual([1]);
        sim.faults.set('paperOut', false);
        await waitFinished(t, key, product, 60_000);
        const o = await checkOutcomes(t, key, product, [sim]);
        expect(o.sealed).toHaveLength(2);
        expect([...o.goodLabels.values()]).toEqual([1, 1]);
        // The cleared label never came out: the restarted agent sent it again within the same attempt.
        expect(o.jobs.get(product.serials[0]!)!.attemptCount).toBe(1);
      } finally {
        await kill(child);
      }
    },
  );

  it(
    'agent killed while its label is under the head: the printer still counts the format, yet the restarted agent does not send it again',
    { timeout: 120_000 },
    async () => {
      // Each label spends 3 s under the head; ~HS counts its format meanwhile and ~JA cannot stop it. The agent
      // is told a label takes up to 8 s (longestLabelMs): more than this printer's 3 s plus rendering on a busy runner.
      const { product, name, floor } = await setUp(
        1,
        { sim: { headMs: 3000 }, config: { longestLabelMs: 8000 } },
        {},
        false,
      );
      const sim = floor.printers[name]!;
      const child = agentProcess(floor.configFile);
      let ref: string;
      try {
        const underTheHead = new Promise<void>((r) => sim.events.on('formatReceived', () => r()));
        ref = (await queue(product, name))[0]!;
        await underTheHead;
      } finally {
        await kill(child);
      }
      expect(sim.status().formatsInBuffer).toBe(1);
      const agent = await floor.startAgent();
      const waiting = () => agent.status().jobs.current.find((j) => j.jobRef === ref)?.waitingFor ?? null;
      // The count fell while the agent watched the paused printer: a label came out, so a person decides.
      await expect.poll(waiting, { timeout: 20_000 }).toBe('attestation');
      expect(sim.labels).toHaveLength(1);
      agent.attest(ref, { id: 'sup-1', name: 'Ana' }, 'label found in the tray');
      await waitFinished(t, key, product, 60_000);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(1);
      expect([...o.goodLabels.values()]).toEqual([1]);
      expect(sim.labels).toHaveLength(1);
    },
  );

  it(
    'agent killed after its label came out, waiting for a supervisor: the restarted agent resumes the attempt; one label, sealed once',
    { timeout: 120_000 },
    async () => {
      const { product, name, floor } = await setUp(1, { config: { attestation: 'human' } }, {}, false);
      const sim = floor.printers[name]!;
      const child = agentProcess(floor.configFile);
      let ref: string;
      try {
        const refs = await queue(product, name);
        ref = refs[0]!;
        await sim.waitForLabels(1, 60_000);
        // SPOOL_SUBMITTED reached the control plane: the label is out, the agent waits for a supervisor.
        await expect
          .poll(async () => (await jobDetail(t, key, ref)).state, { timeout: 30_000, interval: 100 })
          .toBe('SPOOL_SUBMITTED');
        await kill(child);
      } finally {
        await kill(child);
      }
      const agent = await floor.startAgent();
      const waiting = () => agent.status().jobs.current.find((j) => j.jobRef === ref)?.waitingFor ?? null;
      await expect.poll(waiting, { timeout: 20_000 }).toBe('attestation');
      expect(sim.labels).toHaveLength(1); // nothing was sent again on the agent's own say
      // The console tells the supervisor the label may have come out while the agent was down.
      expect(agent.status().jobs.current.find((j) => j.jobRef === ref)?.resumedAfterSend).toBe(true);
      agent.attest(ref, { id: 'sup-1', name: 'Ana' });
      await waitFinished(t, key, product, 60_000);

      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(1);
      expect(o.jobs.get(product.serials[0]!)!.attemptCount).toBe(1);
      expect(o.goodLabels.get(product.serials[0]!)).toBe(1);
      const job = await jobDetail(t, key, ref);
      const attestation = job.evidence.find((e: Json) => e.kind === 'attestation').payload;
      expect(attestation).toMatchObject({ actor: { type: 'human', id: 'sup-1' }, method: 'supervisor' });
      expect(attestation.note).toMatch(/restarted after sending/);
      // Each result once: the resumed run repeated nothing the first run had reported.
      expect(job.evidence.map((e: Json) => e.kind)).toEqual([
        'render_manifest',
        'spool_receipt',
        'attestation',
        'scan_result',
        'evidence_bundle',
      ]);
    },
  );
});

/**
 * Outages shorter than the lease: the agent rides them out. (Longer ones too, once a label may be out: see
 * the send gate in the agent README; a job that had not reached its printer is printed on a new attempt.)
 */
