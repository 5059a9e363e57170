/**
 * Print-job leases: an expired lease returns the job to the pool, a label that may be out never does, and
 * spent retries end in DEAD_LETTER with the serial in the re-print file.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJobFloor } from './floor.js';
import {
  type HttpPrintDevice,
  printableProduct as journey,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

describe.each(testDialects())('print-job leases (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;
  beforeAll(async () => void ({ t, admin, dev } = await startJobFloor(dialect)));
  afterAll(() => t?.close());
  const createJob = (gtin: string, serial: string, extra: Record<string, unknown> = {}) =>
    t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin, serial, ...extra } });

  it('returns an expired lease to the pool; the old attempt gets 410, then 409 STALE_ATTEMPT after a re-claim', async () => {
    const p = await journey(t.call, admin, 1);
    const job = await createJob(p.gtin, p.serials[0]!);
    const c = (await dev.claim())!;
    // Expire the lease as the clock would (the reaper runs every 100 ms here).
    await t.cp.store.db
      .updateTable('print_jobs')
      .set({ lease_expires_at: '2020-01-01T00:00:00.000Z' })
      .where('job_ref', '=', c.jobRef)
      .execute();
    await expect
      .poll(
        async () => (await t.call('GET', `/api/v2/aidc/jobs/${c.jobRef}`, { key: admin })).body.data.state,
        { timeout: 5000 },
      )
      .toBe('FAILED');
    const e = dev.evidence(c);
    const late = await dev.result(c, 'RENDERED', { render_manifest: e.render_manifest });
    expect(late.status).toBe(410);
    expect(late.body.error.code).toBe('ENVELOPE_EXPIRED');
    const again = (await dev.claim())!;
    expect(again.jobRef).toBe(job.body.data.jobRef);
    expect(again.attemptId).not.toBe(c.attemptId);
    const stale = await dev.result(c, 'RENDERED', { render_manifest: e.render_manifest });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('STALE_ATTEMPT');
    const beat = await t.call('POST', `/api/v2/aidc/jobs/${again.jobRef}/heartbeat`, {
      key: dev.token,
      body: { attempt_id: again.attemptId },
    });
    expect(beat.status).toBe(200);
    expect(Date.parse(beat.body.data.leaseExpiresAt)).toBeGreaterThan(Date.now());
    const staleBeat = await t.call('POST', `/api/v2/aidc/jobs/${again.jobRef}/heartbeat`, {
      key: dev.token,
      body: { attempt_id: c.attemptId },
    });
    expect(staleBeat.body.error.code).toBe('STALE_ATTEMPT');
    await dev.seal(again);
  });

  it('never returns a job to the pool once its label may be out: the device renews and finishes, or a person voids it', async () => {
    const p = await journey(t.call, admin, 2);
    const jobs = [];
    for (const serial of p.serials) jobs.push((await createJob(p.gtin, serial)).body.data.jobRef as string);
    const expire = (jobRef: string) =>
      t.cp.store.db
        .updateTable('print_jobs')
        .set({ lease_expires_at: '2020-01-01T00:00:00.000Z' })
        .where('job_ref', '=', jobRef)
        .execute();
    const view = async (jobRef: string) =>
      (await t.call('GET', `/api/v2/aidc/jobs/${jobRef}`, { key: admin })).body.data;
    const claimed = [(await dev.claim())!, (await dev.claim())!];
    const evidence = new Map(claimed.map((c) => [c.jobRef, dev.evidence(c)]));
    for (const c of claimed) {
      const e = evidence.get(c.jobRef)!;
      await dev.result(c, 'RENDERED', { render_manifest: e.render_manifest });
      await dev.result(c, 'SPOOL_SUBMITTED', { spool_receipt: e.spool_receipt });
      await expire(c.jobRef); // the device was cut off, or the control plane was down, longer than the lease
    }
    await new Promise((r) => setTimeout(r, 400)); // several reaper passes (every 100 ms here)
    for (const c of claimed) expect(await view(c.jobRef)).toMatchObject({ state: 'SPOOL_SUBMITTED' });
    expect(await dev.claim()).toBeNull(); // nothing is printed again on the system's say

    // The first device comes back: its heartbeat takes the lease again and it finishes the job.
    const [back, lost] = claimed as [(typeof claimed)[0], (typeof claimed)[0]];
    const beat = await t.call('POST', `/api/v2/aidc/jobs/${back.jobRef}/heartbeat`, {
      key: dev.token,
      body: { attempt_id: back.attemptId },
    });
    expect(beat.status, beat.text).toBe(200);
    expect(Date.parse(beat.body.data.leaseExpiresAt)).toBeGreaterThan(Date.now());
    const e = evidence.get(back.jobRef)!;
    await dev.result(back, 'PRINTED_ATTESTED', { attestation: e.attestation });
    await expire(back.jobRef);
    // Results of the current attempt are taken even with the lease run out.
    expect((await dev.result(back, 'SCAN_VERIFIED', { scan_result: e.scan_result })).status).toBe(200);
    await dev.result(back, 'SEALED', { evidence_bundle: { jws: await dev.bundle(back, e) } });
    expect(await view(back.jobRef)).toMatchObject({ state: 'SEALED' });

    // The other never comes back: a supervisor looked and found no usable label, and voids the attempt.
    const voided = await t.call('POST', `/api/v2/aidc/jobs/${lost.jobRef}/result`, {
      key: admin,
      headers: { 'Idempotency-Key': randomUUID() },
      body: {
        status: 'FAILED',
        evidence: { failure: { reason: 'supervisor_void', detail: 'no label came out' } },
        attempt_id: lost.attemptId,
      },
    });
    expect(voided.status, voided.text).toBe(200);
    const again = (await dev.claim())!;
    expect(again.jobRef).toBe(lost.jobRef);
    await dev.seal(again);
  });

  it('holds a job whose device opened the send gate, even when SPOOL_SUBMITTED never arrived', async () => {
    const p = await journey(t.call, admin, 2);
    for (const serial of p.serials) await createJob(p.gtin, serial);
    const gate = (c: { jobRef: string; attemptId: string }, sending?: boolean) =>
      t.call('POST', `/api/v2/aidc/jobs/${c.jobRef}/heartbeat`, {
        key: dev.token,
        body: { attempt_id: c.attemptId, ...(sending === undefined ? {} : { sending }) },
      });
    const expire = (jobRef: string) =>
      t.cp.store.db
        .updateTable('print_jobs')
        .set({ lease_expires_at: '2020-01-01T00:00:00.000Z' })
        .where('job_ref', '=', jobRef)
        .execute();
    const view = async (jobRef: string) =>
      (await t.call('GET', `/api/v2/aidc/jobs/${jobRef}`, { key: admin })).body.data;
    const [sent, idle] = [(await dev.claim())!, (await dev.claim())!] as const;
    const e = dev.evidence(sent);
    await dev.result(sent, 'RENDERED', { render_manifest: e.render_manifest });
    await dev.result(idle, 'RENDERED', { render_manifest: dev.evidence(idle).render_manifest });
    expect((await gate(sent, 'yes' as never)).status).toBe(400); // a boolean, nothing else
    expect((await gate(sent, true)).status).toBe(200);
    expect((await gate(sent, true)).status).toBe(200); // opening it again changes nothing
    // Both devices are cut off past their leases; only the one that never began sending is reaped.
    await expire(sent.jobRef);
    await expire(idle.jobRef);
    await expect.poll(async () => (await view(idle.jobRef)).state, { timeout: 5000 }).toBe('FAILED');
    expect(await view(sent.jobRef)).toMatchObject({ state: 'RENDERED', attemptId: sent.attemptId });
    // The lapsed idle attempt may not open the gate now: it must claim again.
    expect((await gate(idle, true)).body.error.code).toBe('ENVELOPE_EXPIRED');
    // The sending device comes back: it renews past its lease and reports what it owes.
    expect((await gate(sent)).status).toBe(200);
    await expire(sent.jobRef);
    await dev.seal(sent, { from: 'SPOOL_SUBMITTED', e });
    expect(await view(sent.jobRef)).toMatchObject({ state: 'SEALED', attemptCount: 1 });
    const again = (await dev.claim())!; // the reaped one is printed on a new attempt
    expect(again.jobRef).toBe(idle.jobRef);
    await dev.seal(again);
  });

  it('moves a job whose retries are spent to DEAD_LETTER: the serial lands in the re-print file with print.failed', async () => {
    const p = await journey(t.call, admin, 1);
    await createJob(p.gtin, p.serials[0]!, { maxAttempts: 2 });
    for (let i = 0; i < 2; i++) {
      const c = (await dev.claim())!;
      expect(
        (await dev.result(c, 'FAILED', { failure: { reason: 'paper_out', detail: `try ${i + 1}` } })).status,
      ).toBe(200);
    }
    expect(await dev.claim()).toBeNull();
    await expect
      .poll(
        async () =>
          (await t.call('GET', `/api/v2/aidc/jobs?serial=${p.serials[0]}`, { key: admin })).body.data[0]
            .state,
        { timeout: 5000 },
      )
      .toBe('DEAD_LETTER');
    const reprint = await t.call(
      'GET',
      `/api/v2/carriers/export?productId=${p.productId}&printState=failed&format=json`,
      { key: admin },
    );
    expect(reprint.body.data.map((r: { serial: string }) => r.serial)).toEqual([p.serials[0]]);
    const failed = await t.cp.store.db
      .selectFrom('events')
      .select('data')
      .where('tenant_id', '=', t.tenants.a.id)
      .where('type', '=', 'print.failed')
      .execute();
    expect(failed.some((e) => e.data.includes(p.serials[0]!))).toBe(true);
  });
});
