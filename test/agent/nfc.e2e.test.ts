/**
 * Labels with an NFC tag beside the QR code and the RFID tag, on a real control plane with the agent and a
 * simulated printer fitted with an NFC encoder: the Digital Link is written to each label's NFC tag as an
 * NDEF URI record, read back and attested (`nfcReadBack`) before the label is sealed; a label whose NFC tag
 * will not take the write fails as `nfc_void` and is printed again on a fresh tag, never twice good.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { startFloor, type Floor } from './support/floor.js';
import { jobDetail, printableProduct, queueJobs } from './support/journey.js';
import { checkOutcomes, failureReasons, waitFinished } from './support/outcomes.js';

/** Each test waits up to 60 s for its jobs to finish (waitFinished): longer than the suite's 30 s default. */
const TEST_MS = 90_000;

describe('labels with an NFC tag', () => {
  let t: TestControlPlane;
  let key: string;
  let floor: Floor | null = null;

  beforeAll(async () => {
    t = await startTestControlPlane({
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

  async function setUp(name: string, count: number) {
    const product = await printableProduct(t, key, count);
    floor = await startFloor(t, key, {
      printers: [{ name, rfid: true, sim: { nfc: true }, config: { nfc: true } }],
    });
    return { product, sim: floor.printers[name]! };
  }

  it(
    'writes, reads back and attests the NFC tag and the EPC of every label, then seals it',
    async () => {
      const { product, sim } = await setUp('zebra-nfc1', 2);
      const refs = await queueJobs(t, key, product, { printer: 'zebra-nfc1', labelTemplate: { nfc: true } });
      await waitFinished(t, key, product, 60_000);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(2);
      for (const ref of refs) {
        const job = await jobDetail(t, key, ref);
        const attestation = job.evidence.find((e: { kind: string }) => e.kind === 'attestation').payload;
        expect(attestation).toMatchObject({
          method: 'rfid_readback',
          epcReadBack: job.sgtin96Epc,
          nfcReadBack: job.digitalLink,
        });
      }
      expect(sim.labels.map((l) => [l.void, l.nfcUri])).toEqual(
        product.serials.map((s) => [false, expect.stringMatching(new RegExp(`/21/${s}$`))]),
      );
    },
    TEST_MS,
  );

  it(
    'fails a label whose NFC tag refuses the write (nfc_void) and prints it again on a fresh tag',
    async () => {
      const { product, sim } = await setUp('zebra-nfc2', 1);
      sim.faults.scriptLabel(1, 'voidNfcTag');
      sim.events.on('formatDropped', () => setTimeout(() => sim.resume(), 300)); // the operator clears the error
      await queueJobs(t, key, product, { printer: 'zebra-nfc2', labelTemplate: { nfc: true } });
      await waitFinished(t, key, product, 60_000);
      const o = await checkOutcomes(t, key, product, [sim]);
      expect(o.sealed).toHaveLength(1);
      expect(await failureReasons(t, key, o)).toEqual(['nfc_void']);
      expect([...o.goodLabels.values()]).toEqual([1]);
      expect(sim.labels.map((l) => [l.formatIndex, l.void])).toEqual([
        [1, true],
        [1, true],
        [1, true],
        [2, false],
      ]);
      expect(sim.labels[3]!.nfcUri).toMatch(new RegExp(`/21/${product.serials[0]}$`));
    },
    TEST_MS,
  );
});
