import { createHash, randomUUID } from 'node:crypto';
import { compactVerify, createLocalJWKSet } from 'jose';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AidcEnvelopeClaimsSchema,
  SEAL_RECEIPT_TYPE,
  SealReceiptPayloadSchema,
  canonicalJson,
  deviceTopics,
} from '@dpp/shared';
import { startJobFloor } from './floor.js';
import {
  type ClaimedJob,
  HttpPrintDevice,
  enrollTestDevice,
  printableProduct as journey,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

const now = () => new Date().toISOString();

describe.each(testDialects())('orchestrated print jobs (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;
  beforeAll(async () => void ({ t, admin, dev } = await startJobFloor(dialect)));
  afterAll(() => t?.close());
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
    // It names the passport version the label carries: the product's published one.
    const history = await t.call('GET', `/api/v2/passports/${p.productId}/history`, { key: admin });
    const current = (
      history.body.versions as {
        versionId: string;
        current: boolean;
        contentHash: string;
        merkleRoot: string;
      }[]
    ).find((v) => v.current)!;
    expect(claims.passport_version).toEqual({
      id: current.versionId,
      contentHash: current.contentHash,
      merkleRoot: current.merkleRoot,
    });
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
      passport_version: claims.passport_version,
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
    // The control plane countersigned it: a seal receipt under its published keys, binding the bundle (by
    // hash), the commissioning event (by eventID and hash) and the time.
    const jwks = createLocalJWKSet((await t.call('GET', '/.well-known/jwks.json')).body);
    const receipt = await compactVerify(detail.body.data.sealReceipt, jwks);
    expect(receipt.protectedHeader.typ).toBe(SEAL_RECEIPT_TYPE);
    const signed = new TextDecoder().decode(receipt.payload);
    const r = SealReceiptPayloadSchema.parse(JSON.parse(signed));
    expect(signed).toBe(canonicalJson(JSON.parse(signed)));
    const bundle = detail.body.data.evidence.find((e: { kind: string }) => e.kind === 'evidence_bundle')
      .payload.jws as string;
    expect(r).toMatchObject({
      jobRef: c.jobRef,
      attemptId: c.attemptId,
      deviceId: dev.device.id,
      gtin: p.gtin,
      serial: p.serials[0],
      digitalLink: c.job.digitalLink,
      bundleSha256: createHash('sha256').update(bundle).digest('hex'),
    });
    const event = (epcis.body.epcisBody.queryResults.resultsBody.eventList as Record<string, unknown>[]).find(
      (e) => e.eventID === r.epcisEvent?.eventId,
    )!;
    expect(event).toBeDefined();
    expect(r.epcisEvent!.sha256).toBe(createHash('sha256').update(canonicalJson(event)).digest('hex'));
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

  it('refuses evidence that does not prove what it claims, naming the field, and moves nothing', async () => {
    const p = await journey(t.call, admin, 1);
    const job = await createJob(p.gtin, p.serials[0]!); // RFID by default
    expect(job.status).toBe(201);
    const c = (await dev.claim())!;
    const e = dev.evidence(c);
    const refused = async (status: string, evidence: Record<string, unknown>, field: string) => {
      const r = await dev.result(c, status, evidence);
      expect(r.status, `${field}: ${r.text}`).toBe(422);
      expect(r.body.error).toMatchObject({ code: 'EVIDENCE_REJECTED', details: { field } });
      return r.body.error.details as { expected: unknown; got: unknown };
    };
    const state = async () =>
      (await t.call('GET', `/api/v2/aidc/jobs/${c.jobRef}`, { key: admin })).body.data.state as string;
    const ok = async (status: string, evidence: Record<string, unknown>) => {
      const r = await dev.result(c, status, evidence);
      expect(r.status, r.text).toBe(200);
    };

    // An RFID job's render names the EPC it encodes.
    const { sgtin96Epc: _epc, ...noEpc } = e.render_manifest;
    expect(
      await refused('RENDERED', { render_manifest: noEpc }, 'evidence.render_manifest.sgtin96Epc'),
    ).toMatchObject({ expected: c.job.sgtin96Epc, got: null });
    expect(await state()).toBe('CLAIMED');
    await ok('RENDERED', { render_manifest: e.render_manifest });

    // The bytes sent are the bytes rendered.
    const other = 'f'.repeat(64);
    await refused(
      'SPOOL_SUBMITTED',
      { spool_receipt: { ...e.spool_receipt, payloadSha256: other } },
      'evidence.spool_receipt.payloadSha256',
    );
    await refused(
      'SPOOL_SUBMITTED',
      { spool_receipt: { ...e.spool_receipt, bytes: e.spool_receipt.bytes + 1 } },
      'evidence.spool_receipt.bytes',
    );
    expect(await state()).toBe('RENDERED');
    await ok('SPOOL_SUBMITTED', { spool_receipt: e.spool_receipt });

    // A read-back attestation carries what it read.
    const { epcReadBack: _read, ...noReadBack } = e.attestation as Record<string, unknown>;
    await refused('PRINTED_ATTESTED', { attestation: noReadBack }, 'evidence.attestation.epcReadBack');
    // Attested on the printer's status alone: the tag has not been read back yet.
    await ok('PRINTED_ATTESTED', { attestation: { ...noReadBack, method: 'printer_status' } });

    // So the scan must read the tag: a scan without it, or claiming a comparison without the EPC, is refused.
    const { epcRead: _scanned, epcMatches: _matches, ...linkOnly } = e.scan_result as Record<string, unknown>;
    await refused('SCAN_VERIFIED', { scan_result: linkOnly }, 'evidence.scan_result.epcRead');
    await refused(
      'SCAN_VERIFIED',
      { scan_result: { ...linkOnly, epcMatches: true } },
      'evidence.scan_result.epcRead',
    );
    await refused(
      'SCAN_VERIFIED',
      { scan_result: { ...e.scan_result, epcMatches: false } },
      'evidence.scan_result.epcMatches',
    );
    expect(await state()).toBe('PRINTED_ATTESTED');
    await ok('SCAN_VERIFIED', { scan_result: e.scan_result });

    // The bundle names its key, and signs canonical bytes.
    const reported = {
      ...e,
      attestation: { ...noReadBack, method: 'printer_status' },
    } as unknown as typeof e;
    const noKid = await dev.bundle(c, reported, {}, { header: { kid: undefined } });
    expect(
      await refused('SEALED', { evidence_bundle: { jws: noKid } }, 'evidence.evidence_bundle.jws.header.kid'),
    ).toMatchObject({ got: null });
    const wrongKid = await dev.bundle(c, reported, {}, { header: { kid: 'not-my-key' } });
    await refused(
      'SEALED',
      { evidence_bundle: { jws: wrongKid } },
      'evidence.evidence_bundle.jws.header.kid',
    );
    const otherVersion = { id: randomUUID(), contentHash: 'a'.repeat(64), merkleRoot: 'b'.repeat(64) };
    const elsewhere = await dev.bundle(c, reported, { passportVersion: otherVersion });
    await refused(
      'SEALED',
      { evidence_bundle: { jws: elsewhere } },
      'evidence.evidence_bundle.payload.passportVersion',
    );
    const pretty = await dev.bundle(c, reported, {}, { encode: (v) => JSON.stringify(v, null, 2) });
    await refused('SEALED', { evidence_bundle: { jws: pretty } }, 'evidence.evidence_bundle.jws.payload');
    // Compact, but its members in reverse order.
    const reordered = await dev.bundle(
      c,
      reported,
      {},
      {
        encode: (v) => JSON.stringify(Object.fromEntries(Object.entries(v as object).reverse())),
      },
    );
    await refused('SEALED', { evidence_bundle: { jws: reordered } }, 'evidence.evidence_bundle.jws.payload');
    expect(await state()).toBe('SCAN_VERIFIED');
    await ok('SEALED', { evidence_bundle: { jws: await dev.bundle(c, reported) } });
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
