/**
 * Outage drills, on a real control plane with the agent and simulated devices on real ptys: the control
 * plane down for a while, restarted while jobs run, and the broker down. In each, every serial ends SEALED
 * or in the re-print file, never lost, never sealed twice (`checkOutcomes`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { startFloor, type Floor } from './support/floor.js';
import { printableProduct, queueJobs, type PrintableProduct } from './support/journey.js';
import { checkOutcomes, failureReasons, waitFinished } from './support/outcomes.js';
import { startProxy } from './support/proxy.js';

describe.each(testDialects())('outages (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let floor: Floor | null = null;
  let drill = 0;

  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect,
      mqtt: true,
      env: { PORT: String(await freePort()), AIDC_LEASE_SECONDS: '20', AIDC_REAPER_INTERVAL_MS: '250' },
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
  ): Promise<{ product: PrintableProduct; name: string; floor: Floor }> {
    const name = `zebra-o${++drill}`;
    const product = await printableProduct(t, key, count);
    floor = await startFloor(t, key, { printers: [{ name, rfid: true }], agent });
    return { product, name, floor };
  }

  const queue = (product: PrintableProduct, name: string) => queueJobs(t, key, product, { printer: name });

  it('control plane down for a while: results wait in the outbox and drain in order after; nothing lost', async () => {
    const proxy = await startProxy(Number(new URL(t.url).port));
    try {
      const { product, name, floor } = await setUp(10, { controlPlaneUrl: proxy.url });
      const sim = floor.printers[name]!;
      let unreachable = 0;
      floor.agent!.outbox.events.on('unreachable', () => unreachable++);
      sim.events.on('formatReceived', ({ formatIndex }) => {
        if (formatIndex === 4) {
          proxy.cut();
          setTimeout(() => proxy.restore(), 3000);
        }
      });
      await queue(product, name);
      await waitFinished(t, key, product, 90_000);
      expect(unreachable).toBeGreaterThanOrEqual(1);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(10);
      expect(await failureReasons(t, key, o)).toEqual([]);
      expect([...o.goodLabels.values()].every((n) => n === 1)).toBe(true);
      await expect
        .poll(() => floor.agent!.outbox.counts())
        .toMatchObject({ pending: 0, rejected: 0, skipped: 0 });
    } finally {
      await proxy.close();
    }
  });

  it('control plane restarted while jobs run: the agent rides it out', async () => {
    const { product, name, floor } = await setUp(6);
    const sim = floor.printers[name]!;
    let restarted: Promise<void> | null = null;
    sim.events.on('formatReceived', ({ formatIndex }) => {
      if (formatIndex === 3) restarted = t.restart(); // same port and storage
    });
    await queue(product, name);
    await expect.poll(() => restarted !== null, { timeout: 60_000 }).toBe(true);
    await restarted;
    await waitFinished(t, key, product, 90_000);
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(6);
    expect([...o.goodLabels.values()].every((n) => n >= 1)).toBe(true);
    await expect.poll(() => floor.agent!.outbox.counts().pending).toBe(0);
  });

  it('broker down: the agent polls fast at once (not after its armed idle poll), and every label is sealed', async () => {
    // An idle poll of 10 minutes, armed while the broker was up: the work below is found within seconds only
    // because losing the broker brings the fast poll back at once.
    const slowIdle = {
      intervalMs: 500,
      idleIntervalMs: 600_000,
      notReadyRetryMs: 200,
      statusIntervalMs: 1000,
    };
    const { product, name, floor } = await setUp(5, { poll: slowIdle });
    await expect.poll(() => floor.agent!.status().connections.mqtt.state).toBe('connected');
    await new Promise((r) => setTimeout(r, 1500)); // its first claim found nothing: the idle poll is armed
    await t.cp.services.broker.close();
    await expect.poll(() => floor.agent!.status().connections.mqtt.state).not.toBe('connected');
    await queue(product, name);
    await waitFinished(t, key, product, 30_000);
    expect(floor.agent!.status().connections.mqtt.state).not.toBe('connected');
    const o = await checkOutcomes(t, key, product, [floor.printers[name]!]);
    expect(o.sealed).toHaveLength(5);
    await t.restart(); // the broker comes back with the control plane
    await expect
      .poll(() => floor.agent!.status().connections.mqtt.state, { timeout: 40_000 })
      .toBe('connected');
  });
});
