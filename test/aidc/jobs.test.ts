import { randomUUID } from 'node:crypto';
import { compactVerify, createLocalJWKSet } from 'jose';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AidcEnvelopeClaimsSchema, deviceTopics } from '@dpp/shared';
import {
  type ClaimedJob,
  HttpPrintDevice,
  enrollTestDevice,
  printableProduct as journey,
  startTestControlPlane,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

const now = () => new Date().toISOString();

describe.each(testDialects())('orchestrated print jobs (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;

  beforeAll(async () => {
    t = await startTestControlPlane({
      dialect,
      mqtt: true,
      env: { AIDC_LEASE_SECONDS: '30', AIDC_REAPER_INTERVAL_MS: '100' },
    });
    admin = t.tenants.a.admin;
    dev = await new HttpPrintDevice(
      t.call,
      await enrollTestDevice(t, admin, { printerNames: ['zebra-1'] }),
    ).init();
  });
  afterAll(() => t.close());

  const createJob = (gtin: string, serial: string, extra: Record<string, unknown> = {}) =>
    t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin, serial, ...extra } });

  it('queues a job only for an allocated serial of a readyToPrint passport', async () => {
    const p = await journey(t.call, admin, 2);
    const unallocated = await createJob(p.gtin, '999999999');
    expect(unallocated.status).toBe(422);
    expect(unallocated.body.error.code).toBe('SERIAL_NOT_ALLOCATED');
    const notReady = await t.call('POST', '/api/v2/products', {
      key: admin,
      body: {
        name: 'Draft phone',
        description: 'A product whose passport was never published',
        category: 'electronics',
        gtin: '00012345678905',
        serialNumber: '1',
        extensions: {
          energyEfficiencyClass: 'A',
          annualEnergyConsumptionKwh: 1,
          repairabilityScore: 5,
          weeeCategory: 'small_it_telecom',
        },
      },
    });
    expect(notReady.status, notReady.text).toBe(201);
    const batch = await t.call('POST', '/api/v2/carriers/batch', {
      key: admin,
      body: { productId: notReady.body.id, count: 1 },
    });
    expect(batch.status, batch.text).toBe(201);
    const gate = await createJob('00012345678905', batch.body.serials[0]);
    expect(gate.status).toBe(422);
    expect(gate.body.error.code).toBe('PASSPORT_NOT_READY');

    const ok = await createJob(p.gtin, p.serials[0]!);
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data).toMatchObject({
      state: 'QUEUED',
      serial: p.serials[0],
      attemptCount: 0,
      attemptId: null,
    });
    expect(ok.body.data.digitalLink).toContain(`/01/${p.gtin}/21/${p.serials[0]}`);
    const twice = await createJob(p.gtin, p.serials[0]!);
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('PRINT_JOB_EXISTS');
    const denied = await t.call('POST', '/api/v2/aidc/jobs', {
      key: t.tenants.a.readOnly,
      body: { gtin: p.gtin, serial: p.serials[1] },
    });
    expect(denied.status).toBe(403);
    expect(
      (await t.call('GET', `/api/v2/aidc/jobs/${ok.body.data.jobRef}`, { key: t.tenants.b.admin })).status,
    ).toBe(404);
    // Leave the queue empty for the next tests.
    expect(
      (await t.call('POST', `/api/v2/aidc/jobs/${ok.body.data.jobRef}/cancel`, { key: admin })).body.data
        .state,
    ).toBe('CANCELLED');
  });

  it('tells the devices over MQTT, and hands out a signed envelope that verifies against the JWKS', async () => {
    const p = await journey(t.call, admin, 1);
    const client = await mqtt.connectAsync(dev.device.mqttUrl!, {
      username: dev.device.id,
      password: dev.token,
      reconnectPeriod: 0,
    });
    try {
      const topic = deviceTopics(dev.device.tenantId, dev.device.id).workNotice;
      await client.subscribeAsync(topic, { qos: 1 });
      const notice = new Promise<{ jobRef: string }>((resolve) =>
        client.on('message', (_t, m) => resolve(JSON.parse(m.toString()))),
      );
      const job = await createJob(p.gtin, p.serials[0]!);
      expect((await notice).jobRef).toBe(job.body.data.jobRef);
    } finally {
      await client.endAsync();
    }
    const c = (await dev.claim())!;
    const jwks = createLocalJWKSet((await t.call('GET', '/.well-known/jwks.json')).body);
    const verified = await compactVerify(c.envelope, jwks);
    expect(verified.protectedHeader.typ).toBe('dpp-aidc-envelope+jws');
    const claims = AidcEnvelopeClaimsSchema.parse(JSON.parse(new TextDecoder().decode(verified.payload)));
    expect(claims).toMatchObject({
      aud: dev.device.id,
      job_ref: c.jobRef,
      attempt_id: c.attemptId,
      printer: 'zebra-1',
      serial: p.serials[0],
    });
    expect(claims.exp * 1000).toBeGreaterThan(Date.now());
    // A heartbeat's fresh envelope names the same printer.
    const beat = await t.call('POST', `/api/v2/aidc/jobs/${c.jobRef}/heartbeat`, {
      key: dev.token,
      body: { attempt_id: c.attemptId },
    });
    expect(beat.status).toBe(200);
    const fresh = await compactVerify(beat.body.data.envelope, jwks);
    expect(JSON.parse(new TextDecoder().decode(fresh.payload))).toMatchObject({
      attempt_id: c.attemptId,
      printer: 'zebra-1',
    });
    expect(await dev.claim()).toBeNull(); // one job, one claim
    const foreign = await t.call('POST', '/api/v2/aidc/jobs/claim', {
      key: dev.token,
      body: { printer: { name: 'not-mine', rfid: true } },
    });
    expect(foreign.status).toBe(403); // enrolled for zebra-1 only
    expect(foreign.body.error.details.enrolledPrinters).toEqual(['zebra-1']);
    await dev.seal(c);
  });

  it('seals a job: metadata.print printed, EPCIS commissioning and print.confirmed, in one transaction', async () => {
    const p = await journey(t.call, admin, 1);
    await createJob(p.gtin, p.serials[0]!);
    const c = (await dev.claim())!;
    await dev.seal(c);
    const printed = await t.call(
      'GET',
      `/api/v2/carriers/export?productId=${p.productId}&printState=printed&format=json`,
      { key: admin },
    );
    expect(printed.body.data.map((r: { serial: string }) => r.serial)).toEqual([p.serials[0]]);
    const events = await t.cp.store.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('tenant_id', '=', t.tenants.a.id)
      .where('type', '=', 'print.confirmed')
      .execute();
    expect(events.some((e) => e.data.includes(c.jobRef))).toBe(true);
    const epcis = await t.call('GET', `/api/v2/epcis/events?bizStep=commissioning`, { key: admin });
    expect(JSON.stringify(epcis.body)).toContain(`.${p.serials[0]}`);
    const detail = await t.call('GET', `/api/v2/aidc/jobs/${c.jobRef}`, { key: admin });
    expect(detail.body.data.evidence.map((e: { kind: string }) => e.kind)).toEqual([
      'render_manifest',
      'spool_receipt',
      'attestation',
      'scan_result',
      'evidence_bundle',
    ]);
  });

  it('refuses results out of order, without evidence, with contradicting evidence, or by the wrong actor', async () => {
    const p = await journey(t.call, admin, 1);
    // One attempt only: the FAILED at the end dead-letters the job instead of returning it to the pool.
    const job = await createJob(p.gtin, p.serials[0]!, { maxAttempts: 1 });
    const c = (await dev.claim())!;
    const e = dev.evidence(c);
    const skip = await dev.result(c, 'SCAN_VERIFIED', { scan_result: e.scan_result });
    expect(skip.status).toBe(409);
    expect(skip.body.error.code).toBe('INVALID_TRANSITION');
    const missing = await dev.result(c, 'RENDERED', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('evidence.render_manifest');
    const wrongLink = await dev.result(c, 'RENDERED', {
      render_manifest: { ...e.render_manifest, digitalLink: 'https://evil.example/01/1/21/1' },
    });
    expect(wrongLink.status).toBe(422);
    expect(wrongLink.body.error.code).toBe('EVIDENCE_REJECTED');
    const byKey = await t.call('POST', `/api/v2/aidc/jobs/${c.jobRef}/result`, {
      key: admin,
      headers: { 'Idempotency-Key': randomUUID() },
      body: { status: 'RENDERED', evidence: { render_manifest: e.render_manifest }, attempt_id: c.attemptId },
    });
    expect(byKey.status).toBe(403);
    expect(
      (await t.call('GET', `/api/v2/aidc/jobs/${job.body.data.jobRef}`, { key: admin })).body.data.state,
    ).toBe('CLAIMED');
    const noKey = await t.call('POST', `/api/v2/aidc/jobs/${c.jobRef}/result`, {
      key: dev.token,
      body: { status: 'RENDERED', evidence: { render_manifest: e.render_manifest }, attempt_id: c.attemptId },
    });
    expect(noKey.status, noKey.text).toBe(400);
    expect(noKey.body.error.code, noKey.text).toBe('IDEMPOTENCY_KEY_REQUIRED');
    expect(noKey.body.error.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    // A retried result replays; the same key with another body is a conflict.
    const key = randomUUID();
    const first = await dev.result(c, 'RENDERED', { render_manifest: e.render_manifest }, key);
    const again = await dev.result(c, 'RENDERED', { render_manifest: e.render_manifest }, key);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const other = await dev.result(c, 'FAILED', { failure: { reason: 'x' } }, key);
    expect(other.status).toBe(409);
    await dev.result(c, 'SPOOL_SUBMITTED', { spool_receipt: e.spool_receipt });
    // A person at a console may attest as a human, never as the device.
    const human = await t.call('POST', `/api/v2/aidc/jobs/${c.jobRef}/result`, {
      key: admin,
      headers: { 'Idempotency-Key': randomUUID() },
      body: {
        status: 'PRINTED_ATTESTED',
        evidence: {
          attestation: {
            actor: { type: 'human', id: 'supervisor-7', name: 'Ana' },
            method: 'supervisor',
            attestedAt: now(),
          },
        },
        attempt_id: c.attemptId,
      },
    });
    expect(human.status, human.text).toBe(200);
    await dev.result(c, 'SCAN_VERIFIED', { scan_result: e.scan_result });
    const forged = await dev.result(c, 'SEALED', {
      evidence_bundle: { jws: await dev.bundle(c, e, { jobRef: 'job_0000000000aaaaaaaaaa' }) },
    });
    expect(forged.status).toBe(422);
    expect(forged.body.error.code).toBe('EVIDENCE_REJECTED');
    await dev.result(c, 'FAILED', { failure: { reason: 'operator_abort' } });
  });

  it('refuses an evidence bundle with members the device did not report, at the top or nested', async () => {
    const p = await journey(t.call, admin, 1);
    expect((await createJob(p.gtin, p.serials[0]!)).status).toBe(201);
    const c = (await dev.claim())!;
    const e = dev.evidence(c);
    await dev.result(c, 'RENDERED', { render_manifest: e.render_manifest });
    await dev.result(c, 'SPOOL_SUBMITTED', { spool_receipt: e.spool_receipt });
    await dev.result(c, 'PRINTED_ATTESTED', { attestation: e.attestation });
    await dev.result(c, 'SCAN_VERIFIED', { scan_result: e.scan_result });
    const extra = await dev.result(c, 'SEALED', {
      evidence_bundle: { jws: await dev.bundle(c, e, { approvedBy: 'nobody' }) },
    });
    expect(extra.status).toBe(422);
    expect(extra.body.error).toMatchObject({
      code: 'EVIDENCE_REJECTED',
      details: { field: 'evidence.evidence_bundle.payload.approvedBy' },
    });
    const nested = await dev.result(c, 'SEALED', {
      evidence_bundle: {
        jws: await dev.bundle(c, e, { renderManifest: { ...e.render_manifest, printedTwice: false } }),
      },
    });
    expect(nested.status).toBe(422);
    expect(nested.body.error).toMatchObject({
      code: 'EVIDENCE_REJECTED',
      details: { field: 'evidence.evidence_bundle.render_manifest' },
    });
    const sealed = await dev.result(c, 'SEALED', { evidence_bundle: { jws: await dev.bundle(c, e) } });
    expect(sealed.status, sealed.text).toBe(200);
  });

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

  it('cancels only QUEUED jobs', async () => {
    const p = await journey(t.call, admin, 1);
    const job = await createJob(p.gtin, p.serials[0]!);
    const c = (await dev.claim())!;
    const r = await t.call('POST', `/api/v2/aidc/jobs/${job.body.data.jobRef}/cancel`, { key: admin });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('INVALID_TRANSITION');
    await dev.seal(c);
  });

  it('gives each job to exactly one of 50 devices claiming at once', async () => {
    const p = await journey(t.call, admin, 20);
    for (const s of p.serials) expect((await createJob(p.gtin, s)).status).toBe(201);
    const devices = await Promise.all(
      Array.from({ length: 50 }, async (_, i) =>
        new HttpPrintDevice(
          t.call,
          await enrollTestDevice(t, admin, { name: `d${i}`, printerNames: ['zebra-1'] }),
        ).init(),
      ),
    );
    const claims = (await Promise.all(devices.map((d) => d.claim()))).filter(
      (c): c is ClaimedJob => c !== null,
    );
    expect(claims).toHaveLength(20);
    expect(new Set(claims.map((c) => c.jobRef)).size).toBe(20);
    const attempts = await t.cp.store.db
      .selectFrom('print_attempts')
      .select(['job_ref'])
      .where(
        'job_ref',
        'in',
        claims.map((c) => c.jobRef),
      )
      .execute();
    expect(attempts).toHaveLength(20);
    const jobs = await t.call('GET', `/api/v2/aidc/jobs?state=CLAIMED&limit=200`, { key: admin });
    expect(
      jobs.body.data.filter((j: { jobRef: string }) => claims.some((c) => c.jobRef === j.jobRef)),
    ).toHaveLength(20);
  });
});
