/**
 * A supervisor at the desktop app, through the agent's local console: a PDF label to a spool folder (no
 * printer evidence, no scanner) waits for a person's attestation and a scan entered at the console; a
 * supervisor can fail a label, or have it sent again.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { startFloor, type Floor } from './support/floor.js';
import { jobDetail, printableProduct, queueJobs } from './support/journey.js';

describe('the console in the print loop', () => {
  let t: TestControlPlane;
  let key: string;
  let floor: Floor | null = null;
  let spool: string;

  beforeAll(async () => {
    t = await startTestControlPlane({ mqtt: true });
    key = t.tenants.a.admin;
    spool = await mkdtemp(path.join(os.tmpdir(), 'dpp-spool-'));
  });
  afterEach(async () => {
    await floor?.close();
    floor = null;
  });
  afterAll(async () => {
    await t?.close();
    await rm(spool, { recursive: true, force: true });
  });

  async function office(): Promise<Floor> {
    floor = await startFloor(t, key, {
      printers: [],
      otherPrinters: [{ name: 'office', language: 'pdf', transport: { type: 'spool', dir: spool } }],
    });
    return floor;
  }

  const post = (f: Floor, p: string, body: unknown) =>
    fetch(`${f.agent!.consoleUrl}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const waiting = async (f: Floor) =>
    (await fetch(`${f.agent!.consoleUrl}/api/status`).then((r) => r.json())).data.jobs.current[0];

  it('seals a PDF label attested by a supervisor and scanned at the console', async () => {
    const floor = await office();
    const product = await printableProduct(t, key, 1);
    const [ref] = await queueJobs(t, key, product, { printer: 'office', labelTemplate: { rfid: false } });
    await expect
      .poll(() => waiting(floor), { timeout: 20_000 })
      .toMatchObject({ jobRef: ref, waitingFor: 'attestation' });
    const files = await readdir(spool);
    expect(files).toEqual([`${ref}.pdf`]);
    expect((await readFile(path.join(spool, files[0]!))).subarray(0, 5).toString()).toBe('%PDF-');
    expect((await post(floor, `/api/jobs/${ref}/scan`, { data: 'x' })).status).toBe(409); // not yet

    expect(
      (await post(floor, `/api/jobs/${ref}/attest`, { supervisor: { id: 'sup-7', name: 'Ana Lima' } }))
        .status,
    ).toBe(202);
    await expect.poll(() => waiting(floor), { timeout: 10_000 }).toMatchObject({ waitingFor: 'scan' });
    const job = await jobDetail(t, key, ref!);
    expect((await post(floor, `/api/jobs/${ref}/scan`, { data: job.digitalLink })).status).toBe(202);
    await expect.poll(async () => (await jobDetail(t, key, ref!)).state, { timeout: 10_000 }).toBe('SEALED');
    const sealed = await jobDetail(t, key, ref!);
    const attestation = sealed.evidence.find((e: { kind: string }) => e.kind === 'attestation').payload;
    expect(attestation).toMatchObject({
      actor: { type: 'human', id: 'sup-7', name: 'Ana Lima' },
      method: 'supervisor',
    });
    const scan = sealed.evidence.find((e: { kind: string }) => e.kind === 'scan_result').payload;
    expect(scan).toMatchObject({ scanner: 'console', decodedLink: job.digitalLink });
  });

  it("sends the same label again on request, and fails it with the supervisor's reason", async () => {
    const floor = await office();
    const product = await printableProduct(t, key, 1);
    const [ref] = await queueJobs(t, key, product, {
      printer: 'office',
      labelTemplate: { rfid: false },
      maxAttempts: 1,
    });
    await expect
      .poll(() => waiting(floor), { timeout: 20_000 })
      .toMatchObject({ jobRef: ref, waitingFor: 'attestation' });
    expect((await post(floor, `/api/jobs/${ref}/reprint`, {})).status).toBe(202);
    await expect
      .poll(async () => (await readdir(spool)).filter((f) => f.startsWith(ref!)).sort(), { timeout: 10_000 })
      .toEqual([`${ref}-reprint-1.pdf`, `${ref}.pdf`]);
    await expect.poll(() => waiting(floor), { timeout: 10_000 }).toMatchObject({ waitingFor: 'attestation' });
    expect(
      (await post(floor, `/api/jobs/${ref}/fail`, { reason: 'label_jammed', detail: 'both copies torn' }))
        .status,
    ).toBe(202);
    await expect
      .poll(async () => (await jobDetail(t, key, ref!)).state, { timeout: 10_000 })
      .toMatch(/^(FAILED|DEAD_LETTER)$/);
    const job = await jobDetail(t, key, ref!);
    expect(job.attempts[0].failureReason).toBe('label_jammed');
    expect((await post(floor, `/api/jobs/${ref}/attest`, { supervisor: { id: 'x' } })).status).toBe(404);
  });
});
