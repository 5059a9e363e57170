/**
 * The pipeline on one printer (docs/print-floor.md, "The pipeline"), on a real control plane with the agent
 * and a simulated RFID printer that takes real time per label (firmware-sim's mechanical model): the next
 * format is queued while the label before it prints, labels come out in order and none twice; a failed
 * label fails alone, and the one queued behind it, dropped by the cancel, is sent again; an attempt that
 * went stale while it waited for its turn never reaches the printer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { FAST_RFID_PRINTER_MECHANICS, type PrinterMechanics } from '@dpp/firmware-sim';
import { startFloor, type Floor } from './support/floor.js';
import { printableProduct, queueJobs, type PrintableProduct } from './support/journey.js';
import { checkOutcomes, failureReasons, waitFinished } from './support/outcomes.js';
import { startProxy } from './support/proxy.js';
import { agentProcess, kill } from './support/agent-process.js';
import type { Agent } from '@dpp/agent';

/** Slow enough that the agent always has the next format ready before a label is out. */
const SLOW: PrinterMechanics = { printSpeedIps: 2, labelLengthIn: 2, rfidEncodeMs: 100, rfidReadBackMs: 40 };
/**
 * Slower still (2.14 s a label), where a test asserts that the next format was in before the label ahead came out:
 * between a label's scan and the next format in the printer the agent claims, renders, proves and sends over HTTP
 * and a serial line, and on a loaded two-core machine running the other suites that once took longer than SLOW's
 * 1.14 s label.
 */
const SLOWER: PrinterMechanics = { ...SLOW, printSpeedIps: 1 };

// On both databases: the results a pipelined printer reports together go set-wise, on PostgreSQL without a
// transaction around them (aidc/result-batch.ts), and nothing may be lost or doubled either way.
describe.each(testDialects())('the pipeline on one printer (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let floor: Floor | null = null;
  let n = 0;

  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect,
      mqtt: true,
      env: { PORT: String(await freePort()), AIDC_LEASE_SECONDS: '6', AIDC_REAPER_INTERVAL_MS: '250' },
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
    agent: Parameters<typeof startFloor>[2]['agent'] = {},
    start = true,
    mechanics = SLOW,
  ) {
    const name = `zebra-p${++n}`;
    const product = await printableProduct(t, key, count);
    floor = await startFloor(t, key, {
      printers: [{ name, rfid: true, sim: { mechanics }, config: { longestLabelMs: 2500 } }],
      agent: { jobs: { minLeaseForSendMs: 1000 }, ...agent },
      start,
    });
    const sim = floor.printers[name]!;
    // What the printer holds: formats complete in its buffer and not yet out or dropped.
    const events: string[] = [];
    let held = 0;
    let mostHeld = 0;
    sim.events.on('formatReceived', ({ formatIndex }) => {
      events.push(`in ${formatIndex}`);
      mostHeld = Math.max(mostHeld, ++held);
    });
    sim.events.on('formatDropped', ({ formatIndex }) => {
      events.push(`dropped ${formatIndex}`);
      held--;
    });
    sim.events.on('labelPrinted', (l) => {
      events.push(`out ${l.formatIndex}${l.void ? ' void' : ''}`);
      if (!l.void) held--;
    });
    return { product, name, sim, events, mostHeld: () => mostHeld };
  }

  const queue = (product: PrintableProduct, name: string) => queueJobs(t, key, product, { printer: name });

  /** Queues the product's jobs and waits until all are finished, a supervisor answering what waits for one. */
  async function printSupervised(
    agent: Agent,
    sim: Floor['printers'][string],
    product: PrintableProduct,
    name: string,
  ): Promise<Set<string>> {
    const answered = new Set<string>();
    const supervisor = setInterval(() => supervise(agent, sim.labels, answered), 200);
    try {
      await queue(product, name);
      await waitFinished(t, key, product, 90_000);
    } finally {
      clearInterval(supervisor);
    }
    return answered;
  }

  it('queues the next format while a label prints: in order, at most one ahead, none twice, all sealed', async () => {
    const { product, name, sim, events, mostHeld } = await setUp(6, {}, true, SLOWER);
    // Labels claimed and not out and scanned yet, at each claim: the next job is claimed once the label
    // ahead of the one printing is scanned, so it waits for its turn in the printer's buffer, not in the agent.
    const notScanned = new Set<string>();
    const atClaim: number[] = [];
    floor!.agent!.events.on('job', (e) => {
      if (e.step === 'claimed') atClaim.push(notScanned.add(e.attemptId).size);
      else if (e.step === 'scanned' || e.step === 'failed' || e.step === 'abandoned')
        notScanned.delete(e.attemptId);
    });
    await queue(product, name);
    await waitFinished(t, key, product, 90_000);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(6);
    expect([...o.goodLabels.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    // Out in the order sent, and in the order queued (the serials' order).
    expect(sim.labels.map((l) => l.formatIndex)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(sim.labels.map((l) => l.content!.split('/21/')[1])).toEqual(product.serials);
    // The printer had the next format before the label ahead was out, never two ahead of the one printing.
    expect(events.indexOf('in 3')).toBeLessThan(events.indexOf('out 2'));
    expect(mostHeld()).toBe(2);
    expect(floor!.agent!.status().printers.find((p) => p.name === name)!.printerWaitedAt).toBeNull();
    expect(atClaim).toHaveLength(6);
    expect(Math.max(...atClaim)).toBe(2);

    // The agent's own figures, as a scraper reads them, agree with the printer's: six sealed; the labels it says
    // went into an empty printer (the second at least: the first label is alone while the scanner's window is
    // unknown) are among those the printer got only after the label ahead was out.
    const res = await fetch(`${floor!.agent!.consoleUrl!}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const metrics = await res.text();
    const figure = (series: string) => {
      const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? NaN : Number(line.split(' ')[1]);
    };
    expect(figure(`dpp_agent_jobs_finished_total{printer="${name}",step="sealed"}`)).toBe(6);
    const waited =
      figure(`dpp_agent_printer_waits_total{printer="${name}",reason="agent"}`) +
      figure(`dpp_agent_printer_waits_total{printer="${name}",reason="scan"}`);
    const emptyBefore = [2, 3, 4, 5, 6].filter(
      (k) => events.indexOf(`in ${k}`) > events.indexOf(`out ${k - 1}`),
    );
    expect(waited).toBeGreaterThanOrEqual(1);
    expect(waited).toBeLessThanOrEqual(emptyBefore.length);
    expect(figure(`dpp_agent_label_agent_seconds_count{printer="${name}"}`)).toBe(6);
  });

  it('a printer at eight labels a second: every label read by the scanner before the next comes out over it', async () => {
    const { product, name, sim, events } = await setUp(12, {}, true, FAST_RFID_PRINTER_MECHANICS);
    const agent = floor!.agent!;
    // A label the scanner missed (the next one out over it) waits for a person at the console: none may.
    const atConsole: string[] = [];
    agent.events.on('job', (e) => e.step === 'awaiting_scan' && atConsole.push(e.jobRef));
    await printSupervised(agent, sim, product, name);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(12);
    expect([...o.goodLabels.values()]).toEqual(Array(12).fill(1));
    expect(sim.labels.map((l) => l.content!.split('/21/')[1])).toEqual(product.serials);
    expect(atConsole).toEqual([]);
    // The first label went alone: no scan measured yet (whether the next ones queue depends on this machine).
    expect(events.indexOf('out 1')).toBeLessThan(events.indexOf('in 2'));
    const view = agent.status().printers.find((p) => p.name === name)!;
    // Both figures of the window were measured (their values are the machine's, not asserted here).
    expect(view.scanWindow.labelMs).not.toBeNull();
    expect(view.scanWindow.scanMs).not.toBeNull();
  });

  it('a scan slower than a label on that printer: nothing printed twice, and the next labels each wait for the one before to be read', async () => {
    const { product, name, sim, events } = await setUp(16, {}, true, FAST_RFID_PRINTER_MECHANICS);
    const agent = floor!.agent!;
    const scanner = floor!.scanners[name]!;
    const windowOpen = () => agent.status().printers.find((p) => p.name === name)!.scanWindow.queuesAhead;
    // Once formats are queued, the scanner's line slows to 2400 baud for 2.5 s: a read (about 100 bytes) then
    // takes longer than a label, so the label behind comes out over the one being read. Long enough for several
    // reads: the lane forgives one slow scan in eight, and on a loaded machine the first read may begin before the
    // line slows.
    let slowedAt = -1;
    let closed = false;
    agent.events.on('job', (e) => {
      if (slowedAt < 0 && e.step === 'printing' && windowOpen() && events.includes('out 4')) {
        slowedAt = events.length;
        scanner.setBaudRate(2400);
        setTimeout(() => scanner.setBaudRate(115200), 2500);
      }
      if (slowedAt >= 0 && !closed && !windowOpen()) {
        closed = true;
        events.push('closed');
      }
    });
    await printSupervised(agent, sim, product, name);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(16);
    expect([...o.goodLabels.values()]).toEqual(Array(16).fill(1));
    expect(sim.labels.map((l) => l.content!.split('/21/')[1])).toEqual(product.serials);
    expect(slowedAt).toBeGreaterThan(0);
    // The slow reads closed the lane's window (one of them came after the next label was out), and from then on
    // it sent each format into an empty printer only (the label before it out first), for the next labels.
    expect(closed).toBe(true);
    const after = events.slice(events.indexOf('closed'));
    const sentAfter = after.filter((e) => e.startsWith('in ')).slice(0, 4);
    expect(sentAfter.length).toBeGreaterThan(0);
    for (const e of sentAfter) {
      const i = Number(e.slice(3));
      expect(events.indexOf(`out ${i - 1}`), `label ${i - 1} out before format ${i} came`).toBeLessThan(
        events.indexOf(e),
      );
    }
  });

  it('once the printer waited for a label, the next job is claimed as soon as the one before is sent', async () => {
    const proxy = await startProxy(Number(new URL(t.url).port));
    try {
      const { product, name, sim, events } = await setUp(8, { controlPlaneUrl: proxy.url });
      const agent = floor!.agent!;
      // Labels claimed and not out and scanned yet, at each claim; the control plane pauses for longer than a
      // label once the 3rd job is claimed (behind the 2nd, printing), so the 3rd reaches an empty printer.
      const notScanned = new Set<string>();
      const atClaim: number[] = [];
      agent.events.on('job', (e) => {
        if (e.step === 'claimed') {
          atClaim.push(notScanned.add(e.attemptId).size);
          if (atClaim.length === 3) proxy.stall(2500);
        } else if (e.step === 'scanned' || e.step === 'failed' || e.step === 'abandoned')
          notScanned.delete(e.attemptId);
      });
      await queue(product, name);
      await waitFinished(t, key, product, 90_000);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(8);
      expect([...o.goodLabels.values()]).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
      expect(sim.labels.map((l) => l.formatIndex)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // The printer was empty when the 3rd format came: the 2nd was out before it.
      expect(events.indexOf('out 2')).toBeLessThan(events.indexOf('in 3'));
      // Two labels not out and scanned at most until then; three at a claim after it.
      expect(Math.max(...atClaim.slice(0, 3))).toBe(2);
      expect(Math.max(...atClaim.slice(3))).toBe(3);
      // The console's view of the printer says since when.
      const view = agent.status().printers.find((p) => p.name === name)!;
      expect(Date.parse(view.printerWaitedAt!)).toBeGreaterThan(sim.labels[0]!.printedAt.getTime());
    } finally {
      await proxy.close();
    }
  });

  it('a label that fails fails alone: the one queued behind it, dropped by the cancel, is sent again', async () => {
    const { product, name, sim, events } = await setUp(4);
    sim.faults.scriptLabel(2, 'voidTag');
    sim.events.on('formatDropped', () => setTimeout(() => sim.resume(), 300)); // the operator clears the error
    const refs = await queue(product, name);
    await waitFinished(t, key, product, 90_000);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(4);
    expect(await failureReasons(t, key, o)).toEqual(['rfid_void']);
    expect(o.jobs.get(product.serials[1]!)!.attemptCount).toBe(2);
    for (const i of [0, 2, 3]) expect(o.jobs.get(product.serials[i]!)!.attemptCount).toBe(1);
    expect([...o.goodLabels.values()].every((c) => c === 1)).toBe(true);
    expect(sim.labels.filter((l) => l.void)).toHaveLength(3);
    // The 3rd format was queued behind the failing 2nd, dropped unprinted with it, and sent again.
    expect(events.indexOf('in 3')).toBeLessThan(events.indexOf('dropped 3'));
    expect(events).not.toContain('out 3');
    const third = floor!.agent!.journal.attempts(refs[2]!)[0]!;
    expect(third.evidence.resent_after_cancel).toBe(true);
  });

  it('an attempt that went stale while waiting for its turn never reaches the printer', async () => {
    const proxy = await startProxy(Number(new URL(t.url).port));
    try {
      const { product, name, sim } = await setUp(3, { controlPlaneUrl: proxy.url });
      const agent = floor!.agent!;
      // The 3rd job is claimed and rendered when the 1st is out and scanned, while the 2nd prints; then the device is
      // cut off past the lease before the 3rd's RENDERED reaches the control plane (the send gate waits for
      // it): the 3rd attempt, not yet sent, is reaped and goes stale.
      let cutFor: string | null = null;
      const rendered = new Set<string>();
      agent.events.on('job', (e) => {
        if (e.step !== 'rendered' || cutFor !== null) return;
        if (rendered.add(e.attemptId).size < 3) return;
        cutFor = e.attemptId;
        proxy.cut();
        setTimeout(() => proxy.restore(), 9000);
      });
      await queue(product, name);
      await waitFinished(t, key, product, 120_000);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(3);
      expect([...o.goodLabels.values()]).toEqual([1, 1, 1]);
      expect(sim.labels).toHaveLength(3);
      expect(cutFor).not.toBeNull();
      const stale = product.serials
        .flatMap((s) => agent.journal.attempts(o.jobs.get(s)!.jobRef))
        .find((a) => a.attemptId === cutFor)!;
      expect(stale.evidence.sending).toBeUndefined();
      expect(o.jobs.get(stale.serial)!.attemptCount).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it(
    'the line drops right after a label with another queued behind it: both go to a supervisor, none printed twice',
    { timeout: 120_000 },
    async () => {
      const { product, name, sim } = await setUp(4);
      sim.faults.scriptLabel(2, 'dropAfterPrint');
      const agent = floor!.agent!;
      const answered = await printSupervised(agent, sim, product, name);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(4);
      expect([...o.goodLabels.entries()].filter(([, c]) => c !== 1)).toEqual([]);
      expect(o.jobs.get(product.serials[1]!)!.attemptCount).toBe(1);
      expect(answered.size).toBeGreaterThanOrEqual(1);
    },
  );

  it(
    'agent killed mid-run with labels in the printer: every attempt resumed, each serial out once, sealed once',
    { timeout: 180_000 },
    async () => {
      const { product, name, sim } = await setUp(8, {}, false);
      const child = agentProcess(floor!.configFile);
      try {
        await queue(product, name);
        await sim.waitForLabels(3, 60_000);
      } finally {
        await kill(child);
      }
      const agent = await floor!.startAgent();
      const answered = new Set<string>();
      const supervisor = setInterval(() => supervise(agent, sim.labels, answered), 200);
      try {
        await waitFinished(t, key, product, 120_000);
      } finally {
        clearInterval(supervisor);
      }
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(await failureReasons(t, key, o)).toEqual([]);
      expect(o.sealed).toHaveLength(8);
      expect([...o.goodLabels.entries()].filter(([, c]) => c !== 1)).toEqual([]);
      expect(sim.labels.filter((l) => l.void)).toHaveLength(0);
    },
  );
});

/**
 * A person at the printer: attests a job waiting for them when its label is in the tray, else re-prints;
 * scans at the console a label the scanner over the exit can no longer see (another came out over it).
 */
function supervise(
  agent: Agent,
  labels: readonly { void: boolean; content: string | null; epc: string | null }[],
  answered: Set<string>,
): void {
  const status = agent.status();
  for (const job of status.jobs.current) {
    if (!job.waitingFor || answered.has(`${job.attemptId}:${job.waitingFor}`)) continue;
    const serial = status.jobs.recent.find((r) => r.jobRef === job.jobRef)?.serial;
    if (!serial) continue;
    const inTray = labels.find((l) => !l.void && l.content?.endsWith(`/21/${serial}`));
    try {
      if (job.waitingFor === 'scan') {
        if (!inTray) continue;
        agent.scan(job.jobRef, { data: inTray.content!, epc: inTray.epc ?? undefined });
      } else if (inTray) agent.attest(job.jobRef, { id: 'sup-1', name: 'Ana' }, 'label found in the tray');
      else agent.reprint(job.jobRef);
      answered.add(`${job.attemptId}:${job.waitingFor}`);
    } catch {
      // It stopped waiting meanwhile.
    }
  }
}
