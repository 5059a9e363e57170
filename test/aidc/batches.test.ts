import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HttpPrintDevice,
  enrollTestDevice,
  printableProduct as journey,
  startTestControlPlane,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

/**
 * The batch calls of the device protocol: claims for several printers at once, and results that happen
 * together. Each claim and each result in a batch is exactly the single route's.
 */
describe.each(testDialects())('batched claims and results (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, env: { AIDC_LEASE_SECONDS: '30' } });
    admin = t.tenants.a.admin;
    dev = await new HttpPrintDevice(
      t.call,
      await enrollTestDevice(t, admin, { printerNames: ['zebra-1', 'zebra-2'] }),
    ).init();
  });
  afterAll(() => t?.close());

  async function queue(n: number) {
    const p = await journey(t.call, admin, n);
    for (const serial of p.serials) {
      const r = await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial } });
      expect(r.status, r.text).toBe(201);
    }
    return p;
  }

  const state = async (ref: string) =>
    (await t.call('GET', `/api/v2/aidc/jobs/${ref}`, { key: admin })).body.data as {
      state: string;
      evidence: { kind: string }[];
      sealReceipt: string | null;
    };

  it('claims for several printers in one call, each claim its own attempt, and [] when there is no work', async () => {
    await queue(3);
    const claims = await dev.claimMany([
      { name: 'zebra-1', count: 2 },
      { name: 'zebra-2', count: 2 },
    ]);
    // Three jobs wait: zebra-1 takes two, zebra-2 the last one.
    expect(claims.map((c) => c.printer)).toEqual(['zebra-1', 'zebra-1', 'zebra-2']);
    expect(new Set(claims.map((c) => c.jobRef)).size).toBe(3);
    expect(new Set(claims.map((c) => c.attemptId)).size).toBe(3);
    for (const c of claims) {
      const envelope = JSON.parse(Buffer.from(c.envelope.split('.')[1]!, 'base64url').toString()) as {
        attempt_id: string;
        printer: string;
        job_ref: string;
      };
      expect(envelope).toMatchObject({ attempt_id: c.attemptId, printer: c.printer, job_ref: c.jobRef });
      expect((await state(c.jobRef)).state).toBe('CLAIMED');
    }
    expect(await dev.claimMany([{ name: 'zebra-1', count: 4 }])).toEqual([]);
    await dev.sealMany(claims);
    for (const c of claims) {
      const s = await state(c.jobRef);
      expect(s.state).toBe('SEALED');
      expect(s.evidence.map((e) => e.kind)).toEqual([
        'render_manifest',
        'spool_receipt',
        'attestation',
        'scan_result',
        'evidence_bundle',
      ]);
      expect(s.sealReceipt).toEqual(expect.any(String));
    }
  });

  it('refuses a batch claim for a printer the device was not enrolled for, claiming nothing', async () => {
    await queue(1);
    const r = await t.call('POST', '/api/v2/aidc/jobs/claims', {
      key: dev.token,
      body: { printers: [{ name: 'zebra-1' }, { name: 'zebra-9' }] },
    });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'FORBIDDEN', details: { printer: 'zebra-9' } });
    const left = await dev.claimMany([{ name: 'zebra-1', count: 4 }]);
    expect(left).toHaveLength(1);
    await dev.sealMany(left);
  });

  it('applies each result as the single route would: a refused one changes nothing, the others still apply', async () => {
    await queue(2);
    const [a, b] = await dev.claimMany([{ name: 'zebra-1', count: 2 }]);
    const stepsA = await dev.steps(a!);
    const stepsB = await dev.steps(b!);
    const wrong = structuredClone(stepsB[0]![1]) as { render_manifest: { digitalLink: string } };
    wrong.render_manifest.digitalLink = 'https://id.example.com/01/00000000000000/21/x';
    const r = await dev.results([
      ...stepsA.map(([status, evidence]) => ({ c: a!, status, evidence })),
      { c: b!, status: 'RENDERED', evidence: wrong },
      { c: b!, status: 'SPOOL_SUBMITTED', evidence: stepsB[1]![1] },
    ]);
    expect(r.status, r.text).toBe(200);
    const outcomes = r.body.data as { jobRef: string; status: number; error?: { code: string } }[];
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200, 200, 200, 422, 409]);
    expect(outcomes[5]!.error!.code).toBe('EVIDENCE_REJECTED');
    expect(outcomes[6]!.error!.code).toBe('INVALID_TRANSITION');
    expect((await state(a!.jobRef)).state).toBe('SEALED');
    const sb = await state(b!.jobRef);
    expect(sb.state).toBe('CLAIMED');
    expect(sb.evidence).toEqual([]);
    await dev.sealMany([b!]);
  });

  it('shares Idempotency-Keys with the single route: a repeat replays, another body under the key is 409', async () => {
    await queue(1);
    const [c] = await dev.claimMany([{ name: 'zebra-1' }]);
    const steps = await dev.steps(c!);
    const keys = steps.map(() => randomUUID());
    const items = steps
      .slice(0, 2)
      .map(([status, evidence], i) => ({ c: c!, status, evidence, key: keys[i] }));
    const first = await dev.results(items);
    expect(first.body.data.map((o: { status: number }) => o.status)).toEqual([200, 200]);
    const again = await dev.results(items);
    expect(again.body.data.map((o: { replayed?: boolean }) => o.replayed)).toEqual([true, true]);
    expect(again.body.data[1].data.state).toBe('SPOOL_SUBMITTED');
    const single = await dev.result(c!, 'SPOOL_SUBMITTED', steps[1]![1], keys[1]);
    expect(single.status).toBe(200);
    expect(single.headers.get('idempotent-replayed')).toBe('true');
    const reused = await dev.results([
      { c: c!, status: 'PRINTED_ATTESTED', evidence: steps[2]![1], key: keys[0] },
    ]);
    expect(reused.body.data[0]).toMatchObject({
      status: 409,
      error: { details: { reason: 'idempotency_key_reused' } },
    });
    // The rest through the single route, then a batch repeat of the whole chain replays every step.
    for (const [i, [status, evidence]] of steps.entries()) {
      if (i < 2) continue;
      expect((await dev.result(c!, status, evidence, keys[i])).status).toBe(200);
    }
    const whole = await dev.results(
      steps.map(([status, evidence], i) => ({ c: c!, status, evidence, key: keys[i] })),
    );
    expect(whole.body.data.map((o: { replayed?: boolean }) => o.replayed)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('fences batched results by attempt: a superseded attempt is 409 STALE_ATTEMPT', async () => {
    await queue(1);
    const [c] = await dev.claimMany([{ name: 'zebra-1' }]);
    const steps = await dev.steps(c!);
    const failed = await dev.results([
      { c: c!, status: 'FAILED', evidence: { failure: { reason: 'operator' } } },
    ]);
    expect(failed.body.data[0].status).toBe(200);
    const [again] = await dev.claimMany([{ name: 'zebra-1' }]);
    expect(again!.jobRef).toBe(c!.jobRef);
    const stale = await dev.results([{ c: c!, status: 'RENDERED', evidence: steps[0]![1] }]);
    expect(stale.body.data[0]).toMatchObject({ status: 409, error: { code: 'STALE_ATTEMPT' } });
    await dev.sealMany([again!]);
    expect((await state(c!.jobRef)).state).toBe('SEALED');
  });
});
