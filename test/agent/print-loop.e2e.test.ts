/**
 * The whole loop, done-when of issue 9: a real control plane (HTTP, store, broker, workers), the agent,
 * the simulated printers and scanners on real ptys. A product goes through passport, validation,
 * publish-dpp, carriers and jobs; every label reaches SEALED with its print.confirmed webhook and EPCIS
 * commissioning event, and the printed PNGs decode to the right links.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { decodeSgtin96, type ResultState } from '@dpp/shared';
import { decodeQrPng } from '@dpp/firmware-sim';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import {
  ControlPlaneClient,
  TokenClient,
  keyFilePath,
  loadKeyFile,
  silentLogger,
  type JobStepEvent,
} from '@dpp/agent';
import { startFloor, type Floor } from './support/floor.js';
import {
  epcisEvents,
  jobDetail,
  printableProduct,
  queueJobs,
  subscribeWebhook,
  webhookReceiver,
  type WebhookReceiver,
} from './support/journey.js';
import { checkOutcomes } from './support/outcomes.js';

describe.each(testDialects())('the print loop to SEALED (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let hooks: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, mqtt: true });
    key = t.tenants.a.admin;
    hooks = await webhookReceiver();
    await subscribeWebhook(t, key, hooks.url, ['print.confirmed']);
  });
  afterAll(async () => {
    await t?.close();
    await hooks?.close();
  });

  it('seals a handful of labels with the evidence of every step', async () => {
    const product = await printableProduct(t, key, 3);
    const floor = await startFloor(t, key, { printers: [{ name: 'zebra-1', rfid: true }] });
    try {
      const steps: JobStepEvent[] = [];
      floor.agent!.events.on('job', (e) => steps.push(e));
      const refs = await queueJobs(t, key, product);
      await expect
        .poll(() => steps.filter((s) => s.step === 'sealed').length, { timeout: 60_000, interval: 200 })
        .toBe(3);
      const outcomes = await checkOutcomes(t, key, product, Object.values(floor.printers));
      expect(outcomes.sealed).toHaveLength(3);

      const job = await jobDetail(t, key, refs[0]!);
      expect(job).toMatchObject({ state: 'SEALED', attemptCount: 1, deviceId: floor.identity.deviceId });
      expect(job.attempts).toMatchObject([
        { printer: 'zebra-1', state: 'SEALED', deviceId: floor.identity.deviceId },
      ]);
      expect(job.evidence.map((e: { state: string }) => e.state)).toEqual([
        'RENDERED',
        'SPOOL_SUBMITTED',
        'PRINTED_ATTESTED',
        'SCAN_VERIFIED',
        'SEALED',
      ]);
      const byKind = Object.fromEntries(
        job.evidence.map((e: { kind: string; payload: unknown }) => [e.kind, e.payload]),
      );
      expect(byKind.render_manifest).toMatchObject({
        language: 'zpl',
        qrVerified: true,
        digitalLink: job.digitalLink,
        sgtin96Epc: job.sgtin96Epc,
      });
      expect(byKind.spool_receipt).toMatchObject({
        printer: 'zebra-1',
        transport: 'serial',
        payloadSha256: byKind.render_manifest.payloadSha256,
      });
      expect(byKind.attestation).toMatchObject({
        actor: { type: 'device', id: floor.identity.deviceId },
        method: 'rfid_readback',
        epcReadBack: job.sgtin96Epc,
      });
      expect(byKind.scan_result).toMatchObject({
        decodedLink: job.digitalLink,
        linkMatches: true,
        epcRead: job.sgtin96Epc,
        epcMatches: true,
      });
      expect(byKind.evidence_bundle.jws.split('.')).toHaveLength(3);

      // What the outbox asks after a 409 on a retry: does the job already show this result of this attempt?
      const tokens = new TokenClient({
        identity: floor.identity,
        key: await loadKeyFile(keyFilePath(floor.dataDir)),
        baseUrl: t.url,
        timeoutMs: 5000,
        log: silentLogger,
      });
      const client = new ControlPlaneClient({ baseUrl: t.url, tokens, timeoutMs: 5000 });
      const attemptId = job.attempts[0].attemptId as string;
      const body = (status: ResultState, attempt_id = attemptId) => ({ status, evidence: {}, attempt_id });
      expect(await client.alreadyApplied(refs[0]!, body('SCAN_VERIFIED'))).toBe(true);
      expect(await client.alreadyApplied(refs[0]!, body('SEALED'))).toBe(true);
      expect(await client.alreadyApplied(refs[0]!, body('FAILED'))).toBe(false);
      expect(await client.alreadyApplied(refs[0]!, body('SEALED', randomUUID()))).toBe(false);

      // The console shows the same job, with the preview of its QR.
      const local = await fetch(`${floor.agent!.consoleUrl}/api/jobs/${refs[0]}`).then((r) => r.json());
      expect(local.data.attempts[0]).toMatchObject({ step: 'sealed', serial: product.serials[0] });
      expect(local.data.results.map((r: { delivery: string }) => r.delivery)).toEqual(
        Array(5).fill('delivered'),
      );
      const png = await fetch(`${floor.agent!.consoleUrl}/api/jobs/${refs[0]}/preview.png`);
      expect(png.headers.get('content-type')).toBe('image/png');
    } finally {
      await floor.close();
    }
  });

  it(
    'seals 100 labels on two printers, with print.confirmed webhooks and EPCIS events',
    { timeout: 240_000 },
    async () => {
      const product = await printableProduct(t, key, 100);
      const floor: Floor = await startFloor(t, key, {
        printers: [
          { name: 'zebra-1', rfid: true },
          { name: 'zebra-2', rfid: true },
        ],
      });
      try {
        const sealed = new Set<string>();
        floor.agent!.events.on('job', (e) => {
          if (e.step === 'sealed') sealed.add(e.jobRef);
        });
        await queueJobs(t, key, product);
        await expect.poll(() => sealed.size, { timeout: 200_000, interval: 500 }).toBe(100);
        const outcomes = await checkOutcomes(t, key, product, Object.values(floor.printers));
        expect(outcomes.sealed).toHaveLength(100);
        expect([...outcomes.jobs.values()].every((j) => j.attemptCount === 1)).toBe(true);
        // Both printers worked, one label per serial, every PNG decodes to its serial's link.
        const labels = Object.values(floor.printers).flatMap((p) => p.labels);
        expect(Object.values(floor.printers).every((p) => p.labels.length > 0)).toBe(true);
        expect(labels).toHaveLength(100);
        const links = labels.map((l) => decodeQrPng(l.png)?.data);
        const expected = product.serials.map(
          (s) => labels.find((l) => decodeSgtin96(l.epc!).serial === s)!.content,
        );
        expect(new Set(links)).toEqual(new Set(expected));
        expect([...outcomes.goodLabels.values()].every((n) => n === 1)).toBe(true);

        // print.confirmed for every serial; one EPCIS commissioning event per EPC.
        await expect
          .poll(
            () =>
              new Set(
                hooks.bodies
                  .filter((b) => b.type === 'print.confirmed')
                  .flatMap((b) => ((b.data?.serials ?? []) as Array<{ serial: string }>).map((x) => x.serial))
                  .filter((s) => product.serials.includes(s)),
              ).size,
            { timeout: 30_000, interval: 500 },
          )
          .toBe(100);
        const epcs = new Set(labels.map((l) => decodeSgtin96(l.epc!).pureIdentityUri));
        const events = (await epcisEvents(t, key, 'commissioning')).filter((e) =>
          (e.epcList as string[] | undefined)?.some((epc) => epcs.has(epc)),
        );
        expect(events).toHaveLength(100);
      } finally {
        await floor.close();
      }
    },
  );
});
