/**
 * The soak: the embedded default (SQLite, embedded broker) and a print floor left running for a few minutes,
 * printing in bursts with idle gaps longer than every cache lifetime a setting can shorten (signing keys,
 * access tokens, leases, rate windows). Every label seals, once, and /readyz answers throughout: nothing
 * that expires while the floor is idle may wedge it when work comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { startFloor, type Floor } from '../agent/support/floor.js';
import { printableProduct, queueJobs, type PrintableProduct } from '../agent/support/journey.js';
import { checkOutcomes, failureReasons, waitFinished } from '../agent/support/outcomes.js';

/** How long the floor keeps printing; `SOAK_SECONDS` makes it longer by hand. */
const SOAK_MS = Number(process.env.SOAK_SECONDS ?? 150) * 1000;
/** Longer than every lifetime below. */
const IDLE_MS = 7_000;
const BURST = 4;

const SHORT_LIVES = {
  SIGNING_KEYS_REFRESH_SECONDS: '2',
  ACCESS_TOKEN_TTL_SECONDS: '5',
  AIDC_LEASE_SECONDS: '6',
  AIDC_REAPER_INTERVAL_MS: '250',
  RATE_LIMITS: 'free=600/2,mid_market=6000/2,enterprise=60000/2',
};

describe('soak: the embedded default keeps printing across idle gaps', () => {
  let t: TestControlPlane;
  let floor: Floor;
  let key: string;
  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect: 'sqlite',
      mqtt: true,
      env: { PORT: String(await freePort()), ...SHORT_LIVES },
    });
    key = t.tenants.a.admin;
  });
  afterAll(async () => {
    await floor?.close();
    await t?.close();
  });

  it('seals every label, once, with /readyz up after every gap', { timeout: SOAK_MS + 120_000 }, async () => {
    const rounds = Math.max(2, Math.floor(SOAK_MS / (IDLE_MS + 3_000)));
    const product = await printableProduct(t, key, rounds * BURST);
    floor = await startFloor(t, key, {
      printers: [{ name: 'soak-1', rfid: true }],
      agent: { jobs: { minLeaseForSendMs: 1000 } },
    });
    const sim = floor.printers['soak-1']!;
    for (let i = 0; i < rounds; i++) {
      await new Promise((r) => setTimeout(r, IDLE_MS)); // everything cached has expired by now
      const ready = await fetch(`${t.url}/readyz`);
      expect(ready.status, `round ${i}`).toBe(200);
      const burst: PrintableProduct = {
        ...product,
        serials: product.serials.slice(i * BURST, (i + 1) * BURST),
      };
      await queueJobs(t, key, burst, { printer: 'soak-1' });
      await waitFinished(t, key, burst, 30_000);
    }
    const o = await checkOutcomes(t, key, product, [sim]);
    expect(o.sealed).toHaveLength(rounds * BURST);
    expect(await failureReasons(t, key, o)).toEqual([]);
    expect([...o.goodLabels.values()].every((n) => n === 1)).toBe(true);
  });
});
