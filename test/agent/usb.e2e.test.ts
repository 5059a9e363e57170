/**
 * A USB label printer on the whole loop: a real control plane, the agent, the simulated printer reached as a
 * usblp device (its pty standing in for /dev/usb/lp0, a fake sysfs tree naming its USB serial number). Paper
 * out is seen by `~HS` before anything is sent, so no label goes out while the printer could not print it (the
 * failure CUPS reports as a completed job); once paper is back, each label is printed once, its tag read back
 * over USB, and sealed with a spool receipt naming the printer's serial number and the device.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { FakeUsbSysfs } from '@dpp/testkit/usb';
import { UsbTransport, silentLogger, startAgent, type JobStepEvent, type PrinterView } from '@dpp/agent';
import { startFloor, type Floor } from './support/floor.js';
import { jobDetail, printableProduct, queueJobs } from './support/journey.js';
import { checkOutcomes } from './support/outcomes.js';

const SERIAL = 'D8N231500123';

describe('a USB printer on the print loop', () => {
  let t: TestControlPlane;
  let key: string;
  let tree: FakeUsbSysfs;
  let floor: Floor | null = null;

  beforeAll(async () => {
    t = await startTestControlPlane({ mqtt: true });
    key = t.tenants.a.admin;
    tree = await FakeUsbSysfs.create();
  });
  afterAll(async () => {
    await floor?.close();
    await tree?.close();
    await t?.close();
  });

  it('holds every label while ~HS says paper out, then prints and seals each once over USB', async () => {
    const product = await printableProduct(t, key, 2);
    floor = await startFloor(t, key, {
      printers: [
        {
          name: 'zebra-usb',
          rfid: true,
          config: { transport: { type: 'usb', serialNumber: SERIAL, vendorId: '0a5f' } },
        },
      ],
      start: false,
    });
    const sim = floor.printers['zebra-usb']!;
    await tree.plug({ serialNumber: SERIAL }, 0, sim.path!);
    const usb = floor.config.printers[0]!.transport;
    if (usb.type !== 'usb') throw new Error('the floor did not configure a USB printer');
    const formats: number[] = [];
    sim.events.on('formatReceived', ({ formatIndex }) => formats.push(formatIndex));
    sim.faults.set('paperOut', true);

    const agent = await startAgent(floor.config, {
      log: silentLogger,
      transports: {
        'zebra-usb': new UsbTransport({ ...usb, sysfsRoot: tree.sysfsRoot, devRoot: tree.devRoot }),
      },
    });
    floor.agent = agent;
    const views: PrinterView[] = [];
    agent.events.on('printer', (v) => views.push(v));
    const steps: JobStepEvent[] = [];
    agent.events.on('job', (e) => steps.push(e));

    const refs = await queueJobs(t, key, product);
    await expect.poll(() => views.at(-1)?.state, { timeout: 15_000 }).toBe('paper_out');
    await new Promise((r) => setTimeout(r, 2000)); // jobs are queued and the printer asked again meanwhile
    expect(formats).toEqual([]);
    expect(sim.labels).toHaveLength(0);
    expect(steps.filter((s) => s.step === 'sealed')).toHaveLength(0);

    sim.faults.set('paperOut', false);
    await expect
      .poll(() => steps.filter((s) => s.step === 'sealed').length, { timeout: 60_000, interval: 200 })
      .toBe(2);
    const outcomes = await checkOutcomes(t, key, product, [sim]);
    expect(outcomes.sealed).toHaveLength(2);
    expect([...outcomes.goodLabels.values()]).toEqual([1, 1]);
    expect(sim.labels).toHaveLength(2);

    for (const ref of refs) {
      const job = await jobDetail(t, key, ref);
      expect(job).toMatchObject({ state: 'SEALED', attemptCount: 1 });
      const byKind = Object.fromEntries(
        job.evidence.map((e: { kind: string; payload: unknown }) => [e.kind, e.payload]),
      );
      expect(byKind.spool_receipt).toMatchObject({
        printer: 'zebra-usb',
        transport: 'usb',
        reference: `usb:${SERIAL} via ${tree.devRoot}/usb/lp0`,
      });
      expect(byKind.attestation).toMatchObject({ method: 'rfid_readback', epcReadBack: job.sgtin96Epc });
    }
  });
});
