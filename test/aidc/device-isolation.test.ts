/**
 * A device learns nothing about another device's print jobs, credentials of the wrong kind get the documented
 * 403, the claim answer names its attempt as the spec does, and every EVIDENCE_REJECTED says which field, what
 * was expected and what came.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClaimedJob,
  HttpPrintDevice,
  enrollTestDevice,
  printableProduct as journey,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';
import { startJobFloor } from './floor.js';

describe.each(testDialects())('print jobs between devices (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  let a: HttpPrintDevice;
  let b: HttpPrintDevice;
  beforeAll(async () => {
    ({ t, admin, dev: a } = await startJobFloor(dialect));
    b = await new HttpPrintDevice(
      t.call,
      await enrollTestDevice(t, admin, { printerNames: ['zebra-1'] }),
    ).init();
  });
  afterAll(() => t?.close());

  const heartbeat = (device: HttpPrintDevice, jobRef: string, attemptId: string) =>
    t.call('POST', `/api/v2/aidc/jobs/${jobRef}/heartbeat`, {
      key: device.token,
      body: { attempt_id: attemptId },
    });
  const render = (device: HttpPrintDevice, c: ClaimedJob, attemptId: string) =>
    device.result({ ...c, attemptId }, 'RENDERED', { render_manifest: device.evidence(c).render_manifest });

  /** A job claimed by `a`, failed by it, then claimed by `b`: `a` holds an old attempt, `b` the current one. */
  async function handedOver(): Promise<{ old: ClaimedJob; current: ClaimedJob }> {
    const p = await journey(t.call, admin, 1);
    const created = await t.call('POST', '/api/v2/aidc/jobs', {
      key: admin,
      body: { gtin: p.gtin, serial: p.serials[0] },
    });
    expect(created.status, created.text).toBe(201);
    const old = (await a.claim())!;
    expect((await a.result(old, 'FAILED', { failure: { reason: 'printer_offline' } })).status).toBe(200);
    const current = (await b.claim())!;
    expect(current.jobRef).toBe(old.jobRef);
    expect(current.attemptId > old.attemptId, 'a later attempt sorts after the one it supersedes').toBe(true);
    return { old, current };
  }

  it('answers a claim with attempt_id, the name every later call sends back', async () => {
    const p = await journey(t.call, admin, 1);
    await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial: p.serials[0] } });
    const r = await t.call('POST', '/api/v2/aidc/jobs/claim', {
      key: a.token,
      body: { printer: { name: 'zebra-1', rfid: true } },
    });
    expect(r.status, r.text).toBe(200);
    // A UUIDv7: unique, and time-ordered so the attempts' indexes take each new one at their right edge.
    expect(r.body.data.attempt_id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(r.body.data).not.toHaveProperty('attemptId');
    expect(r.body.data.job.attemptId).toBe(r.body.data.attempt_id);
    const claimed = { jobRef: r.body.data.job.jobRef, attemptId: r.body.data.attempt_id } as ClaimedJob;
    expect((await a.result(claimed, 'FAILED', { failure: { reason: 'operator' } })).status).toBe(200);
  });

  it("never shows a device another device's attempt: not found, forbidden, or stale without the current id", async () => {
    const { old, current } = await handedOver();
    // The device that never attempted the job does not see it, whatever attempt it names.
    const other = await (async () => {
      const p = await journey(t.call, admin, 1);
      await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial: p.serials[0] } });
      return (await b.claim())!;
    })();
    for (const r of [
      await heartbeat(a, other.jobRef, other.attemptId),
      await render(a, other, other.attemptId),
    ]) {
      expect(r.status, r.text).toBe(404);
      expect(r.text).not.toContain(other.attemptId);
    }
    // Its own superseded attempt is stale, without the other device's fencing token.
    for (const r of [await heartbeat(a, old.jobRef, old.attemptId), await render(a, old, old.attemptId)]) {
      expect(r.status, r.text).toBe(409);
      expect(r.body.error.code).toBe('STALE_ATTEMPT');
      expect(r.body.error.details).not.toHaveProperty('currentAttemptId');
      expect(r.text).not.toContain(current.attemptId);
    }
    // Another device's attempt, or a made-up one, on a job it did attempt: forbidden, and nothing more.
    for (const attemptId of [current.attemptId, randomUUID()]) {
      for (const r of [await heartbeat(a, old.jobRef, attemptId), await render(a, old, attemptId)]) {
        expect(r.status, r.text).toBe(403);
        expect(r.body.error.code).toBe('FORBIDDEN');
        expect(r.body.error.details ?? {}).not.toHaveProperty('currentAttemptId');
        if (attemptId !== current.attemptId) expect(r.text).not.toContain(current.attemptId);
      }
    }
    // The holder goes on; a person at a console is told which attempt is current.
    expect((await heartbeat(b, current.jobRef, current.attemptId)).status).toBe(200);
    const byPerson = await t.call('POST', `/api/v2/aidc/jobs/${old.jobRef}/result`, {
      key: admin,
      headers: { 'Idempotency-Key': randomUUID() },
      body: { status: 'FAILED', evidence: { failure: { reason: 'operator' } }, attempt_id: old.attemptId },
    });
    expect(byPerson.status).toBe(409);
    expect(byPerson.body.error.details.currentAttemptId).toBe(current.attemptId);
    expect((await b.result(current, 'FAILED', { failure: { reason: 'operator' } })).status).toBe(200);
    expect((await b.result(other, 'FAILED', { failure: { reason: 'operator' } })).status).toBe(200);
  });

  it('answers a credential of the wrong kind with 403 API_SCOPE_DENIED naming required and available', async () => {
    const issuerRoute = await t.call('POST', '/api/v2/aidc/jobs', {
      key: a.token,
      body: { gtin: '09506000134352', serial: '1' },
    });
    expect(issuerRoute.status, issuerRoute.text).toBe(403);
    expect(issuerRoute.body.error).toMatchObject({
      code: 'API_SCOPE_DENIED',
      details: { required: 'aidc:jobs', available: ['aidc:device'] },
    });
    const deviceRoute = await t.call('POST', '/api/v2/aidc/jobs/claim', {
      key: admin,
      body: { printer: { name: 'zebra-1', rfid: true } },
    });
    expect(deviceRoute.status, deviceRoute.text).toBe(403);
    expect(deviceRoute.body.error.code).toBe('API_SCOPE_DENIED');
    expect(deviceRoute.body.error.details.required).toBe('aidc:device');
    expect(Array.isArray(deviceRoute.body.error.details.available)).toBe(true);
  });

  it('names the field, what was expected and what came in every EVIDENCE_REJECTED', async () => {
    const p = await journey(t.call, admin, 1);
    await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial: p.serials[0] } });
    const c = (await a.claim())!;
    const e = a.evidence(c);
    const expectRejected = async (
      r: {
        status: number;
        text: string;
        body: { error: { code: string; details: Record<string, unknown> } };
      },
      field: string,
    ): Promise<void> => {
      expect(r.status, r.text).toBe(422);
      expect(r.body.error.code).toBe('EVIDENCE_REJECTED');
      expect(r.body.error.details.field).toBe(field);
      expect(r.body.error.details).toHaveProperty('expected');
      expect(r.body.error.details).toHaveProperty('got');
      expect(r.body.error.details.expected).not.toEqual(r.body.error.details.got);
    };
    await expectRejected(
      await a.result(c, 'RENDERED', {
        render_manifest: { ...e.render_manifest, digitalLink: 'https://evil.example/01/1/21/1' },
      }),
      'evidence.render_manifest.digitalLink',
    );
    await a.result(c, 'RENDERED', { render_manifest: e.render_manifest });
    await a.result(c, 'SPOOL_SUBMITTED', { spool_receipt: e.spool_receipt });
    await expectRejected(
      await a.result(c, 'PRINTED_ATTESTED', {
        attestation: { ...e.attestation, actor: { type: 'device', id: b.device.id } },
      }),
      'evidence.attestation.actor.id',
    );
    await expectRejected(
      await a.result(c, 'PRINTED_ATTESTED', {
        attestation: { ...e.attestation, epcReadBack: '3'.repeat(24) },
      }),
      'evidence.attestation.epcReadBack',
    );
    await a.result(c, 'PRINTED_ATTESTED', { attestation: e.attestation });
    await expectRejected(
      await a.result(c, 'SCAN_VERIFIED', { scan_result: { ...e.scan_result, epcRead: '3'.repeat(24) } }),
      'evidence.scan_result.epcRead',
    );
    await a.result(c, 'SCAN_VERIFIED', { scan_result: e.scan_result });
    await expectRejected(
      await a.result(c, 'SEALED', { evidence_bundle: { jws: await b.bundle(c, e) } }),
      'evidence.evidence_bundle.jws',
    );
    await expectRejected(
      await a.result(c, 'SEALED', {
        evidence_bundle: { jws: await a.bundle(c, e, { jobRef: 'job_0000000000aaaaaaaaaa' }) },
      }),
      'evidence.evidence_bundle.payload.jobRef',
    );
    await expectRejected(
      await a.result(c, 'SEALED', {
        evidence_bundle: {
          jws: await a.bundle(c, { ...e, scan_result: { ...e.scan_result, scanner: 'other' } }),
        },
      }),
      'evidence.evidence_bundle.scan_result',
    );
    expect((await a.result(c, 'SEALED', { evidence_bundle: { jws: await a.bundle(c, e) } })).status).toBe(
      200,
    );
  });
});
