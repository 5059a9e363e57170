import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClaimedJob,
  HttpPrintDevice,
  enrollTestDevice,
  keyRotationProof,
  newDeviceKey,
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

  /** SEALED with one evidence row of each kind and its seal receipt. */
  async function expectSealed(ref: string) {
    const s = await state(ref);
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
      await expectSealed(c.jobRef);
    }
  });

  it('gives each printer of a call what claiming in turn would: jobs for it by name, and RFID jobs only where it has RFID', async () => {
    const db = t.cp.store.db;
    const refsOf = async (n: number) => {
      const p = await queue(n);
      const jobs = await db
        .selectFrom('print_jobs')
        .select('job_ref')
        .where('product_id', '=', p.productId)
        .orderBy('created_at')
        .orderBy('job_ref')
        .execute();
      return jobs.map((j) => j.job_ref);
    };
    // Oldest first: two jobs only zebra-1 may print, a job that needs RFID, then a plain one.
    const [forOne1, forOne2] = await refsOf(2);
    const [needsRfid] = await refsOf(1);
    const [plain] = await refsOf(1);
    await db
      .updateTable('print_jobs')
      .set({ printer: 'zebra-1' })
      .where('job_ref', 'in', [forOne1!, forOne2!])
      .execute();
    const all = [forOne1!, forOne2!, needsRfid!, plain!];
    await db
      .updateTable('print_jobs')
      .set((eb) => ({ requires_rfid: eb.case().when('job_ref', '=', needsRfid!).then(1).else(0).end() }))
      .where('job_ref', 'in', all)
      .execute();
    // zebra-2 (no RFID) is passed the three older jobs: it takes the plain one, the fourth in the queue
    // although the call asks for two jobs in all; zebra-1 (RFID) takes the oldest, which is its own.
    const first = await dev.claimMany([
      { name: 'zebra-2', rfid: false },
      { name: 'zebra-1', rfid: true },
    ]);
    expect(first.map((c) => [c.printer, c.jobRef])).toEqual([
      ['zebra-2', plain],
      ['zebra-1', forOne1],
    ]);
    // Then zebra-1 takes its second own job and the RFID one; zebra-2 finds none it may print.
    const second = await dev.claimMany([
      { name: 'zebra-2', rfid: false, count: 2 },
      { name: 'zebra-1', rfid: true, count: 2 },
    ]);
    expect(second.map((c) => [c.printer, c.jobRef])).toEqual([
      ['zebra-1', forOne2],
      ['zebra-1', needsRfid],
    ]);
    const claims = [...first, ...second];
    expect(new Set(claims.map((c) => c.attemptId)).size).toBe(4);
    await dev.sealMany(claims);
    for (const c of claims) await expectSealed(c.jobRef);
  });

  it('writes each claim of a call its own attempt and envelope: its job, number, jti and passport version', async () => {
    const db = t.cp.store.db;
    const p1 = await queue(2);
    const p2 = await queue(1);
    const p3 = await queue(1);
    // p1's first job was claimed before and reaped (its lease ran out): its next attempt is number 2.
    const [earlier] = await dev.claimMany([{ name: 'zebra-1' }]);
    const reapedAt = new Date().toISOString();
    await db
      .updateTable('print_jobs')
      .set({ state: 'FAILED', last_error: 'lease_expired', lease_expires_at: null, updated_at: reapedAt })
      .where('job_ref', '=', earlier!.jobRef)
      .execute();
    await db
      .updateTable('print_attempts')
      .set({ state: 'FAILED', failure_reason: 'lease_expired', ended_at: reapedAt })
      .where('attempt_id', '=', earlier!.attemptId)
      .execute();
    const current = async (productId: string) => {
      const history = await t.call('GET', `/api/v2/passports/${productId}/history`, { key: admin });
      const v = (
        history.body.versions as {
          versionId: string;
          current: boolean;
          contentHash: string;
          merkleRoot: string;
        }[]
      ).find((x) => x.current)!;
      return { id: v.versionId, contentHash: v.contentHash, merkleRoot: v.merkleRoot };
    };
    const v1 = await current(p1.productId);
    const v2 = await current(p2.productId);
    expect(v2.id).not.toBe(v1.id);
    // p3's passport has no current version at the claim: its label names none.
    const p3Version = await db
      .selectFrom('passports')
      .select('current_version_id')
      .where('product_id', '=', p3.productId)
      .executeTakeFirstOrThrow();
    await db
      .updateTable('passports')
      .set({ current_version_id: null })
      .where('product_id', '=', p3.productId)
      .execute();

    const r = await t.call('POST', '/api/v2/aidc/jobs/claims', {
      key: dev.token,
      body: {
        printers: [
          { name: 'zebra-2', rfid: true, count: 3 },
          { name: 'zebra-1', rfid: true, count: 3 },
        ],
      },
    });
    expect(r.status, r.text).toBe(200);
    await db
      .updateTable('passports')
      .set({ current_version_id: p3Version.current_version_id })
      .where('product_id', '=', p3.productId)
      .execute();
    type Claim = {
      job: ClaimedJob['job'] & { jobRef: string };
      attempt_id: string;
      envelope: string;
      leaseExpiresAt: string;
      printer: string;
    };
    const claims = r.body.data as Claim[];
    // Oldest first, printer by printer: zebra-2 takes three, zebra-1 the last one and finds no more.
    const expected = [
      { serial: p1.serials[0], printer: 'zebra-2', number: 2, version: v1 },
      { serial: p1.serials[1], printer: 'zebra-2', number: 1, version: v1 },
      { serial: p2.serials[0], printer: 'zebra-2', number: 1, version: v2 },
      { serial: p3.serials[0], printer: 'zebra-1', number: 1, version: null },
    ];
    expect(claims.map((c) => [c.job.serial, c.printer])).toEqual(expected.map((e) => [e.serial, e.printer]));
    const jtis = new Set<string>();
    for (const [i, c] of claims.entries()) {
      const e = expected[i]!;
      const envelope = JSON.parse(Buffer.from(c.envelope.split('.')[1]!, 'base64url').toString()) as {
        jti: string;
        iat: number;
      };
      jtis.add(envelope.jti);
      expect(envelope).toMatchObject({
        aud: dev.device.id,
        attempt_id: c.attempt_id,
        job_ref: c.job.jobRef,
        printer: e.printer,
        serial: e.serial,
        passport_version: e.version,
        lease_expires_at: c.leaseExpiresAt,
      });
      const attempt = await db
        .selectFrom('print_attempts')
        .selectAll()
        .where('attempt_id', '=', c.attempt_id)
        .executeTakeFirstOrThrow();
      expect(attempt).toMatchObject({
        job_ref: c.job.jobRef,
        device_id: dev.device.id,
        printer: e.printer,
        number: e.number,
        envelope_jti: envelope.jti,
        passport_version_id: e.version?.id ?? null,
        state: 'CLAIMED',
        ended_at: null,
        failure_reason: null,
      });
      expect(Math.floor(Date.parse(attempt.claimed_at) / 1000)).toBe(envelope.iat);
      const job = await db
        .selectFrom('print_jobs')
        .selectAll()
        .where('job_ref', '=', c.job.jobRef)
        .executeTakeFirstOrThrow();
      expect(job).toMatchObject({
        state: 'CLAIMED',
        attempt_id: c.attempt_id,
        attempt_count: e.number,
        device_id: dev.device.id,
        lease_expires_at: c.leaseExpiresAt,
      });
    }
    expect(jtis.size).toBe(4);
    await dev.sealMany(
      claims.map((c) => ({
        jobRef: c.job.jobRef,
        attemptId: c.attempt_id,
        envelope: c.envelope,
        job: c.job,
      })),
    );
    for (const c of claims) await expectSealed(c.job.jobRef);
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

  it("refuses a SEALED whose bundle another key signed, or whose signature is broken, and seals the batch's others", async () => {
    await queue(3);
    const [a, b, c] = await dev.claimMany([{ name: 'zebra-1', count: 3 }]);
    const stepsA = await dev.steps(a!);
    const stepsB = await dev.steps(b!);
    const stepsC = await dev.steps(c!);
    // b's bundle signed by a key the device does not have; c's with its signature's first byte changed.
    const stranger = new HttpPrintDevice(t.call, { ...dev.device, key: await newDeviceKey() });
    const foreign = (await stranger.steps(b!)).at(-1)![1];
    const jws = (stepsC.at(-1)![1].evidence_bundle as { jws: string }).jws;
    const [head, body, sig] = jws.split('.') as [string, string, string];
    const bytes = Buffer.from(sig, 'base64url');
    bytes[0] = bytes[0]! ^ 0xff;
    const broken = { evidence_bundle: { jws: `${head}.${body}.${bytes.toString('base64url')}` } };
    const r = await dev.results([
      ...[...stepsA, ...stepsB.slice(0, -1)].map(([status, evidence], i) => ({
        c: i < stepsA.length ? a! : b!,
        status,
        evidence,
      })),
      { c: b!, status: 'SEALED', evidence: foreign },
      ...stepsC.slice(0, -1).map(([status, evidence]) => ({ c: c!, status, evidence })),
      { c: c!, status: 'SEALED', evidence: broken },
    ]);
    expect(r.status, r.text).toBe(200);
    const outcomes = r.body.data as { status: number; error?: { code: string; message: string } }[];
    const sealing = [stepsA.length + stepsB.length - 1, outcomes.length - 1];
    expect(outcomes.map((o) => o.status)).toEqual(outcomes.map((_, i) => (sealing.includes(i) ? 422 : 200)));
    for (const refused of sealing.map((i) => outcomes[i]!)) {
      expect(refused.error).toMatchObject({ code: 'EVIDENCE_REJECTED' });
      expect(refused.error!.message).toMatch(/signature/);
    }
    await expectSealed(a!.jobRef);
    // Everything before their seals stands; each seals once its own device signs its bundle.
    for (const [x, steps] of [[b!, stepsB] as const, [c!, stepsC] as const]) {
      expect((await state(x.jobRef)).state).toBe(steps.at(-2)![0]);
      const sealed = await dev.results([{ c: x, status: 'SEALED', evidence: steps.at(-1)![1] }]);
      expect(sealed.body.data[0].status, sealed.text).toBe(200);
      await expectSealed(x.jobRef);
    }
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

  const audited = async (ref: string) =>
    (
      await t.cp.store.db
        .selectFrom('audit_log')
        .select('action')
        .where('resource_id', '=', ref)
        .orderBy('id')
        .execute()
    ).map((a) => a.action);

  /**
   * One job's results in an order that mixes refusals in: a wrong payload hash after the render (refused
   * against the manifest recorded just before), a SEALED too early, then the rest, and a result after SEALED.
   */
  async function mixed(c: ClaimedJob) {
    const steps = await dev.steps(c);
    const receipt = (steps[1]![1] as { spool_receipt: Record<string, unknown> }).spool_receipt;
    const forged = { spool_receipt: { ...receipt, payloadSha256: 'f'.repeat(64) } };
    const [rendered, spooled, attested, verified, sealed] = steps.map(([, evidence]) => evidence);
    return [
      ['RENDERED', rendered],
      ['SPOOL_SUBMITTED', forged],
      ['SPOOL_SUBMITTED', spooled],
      ['SEALED', sealed],
      ['PRINTED_ATTESTED', attested],
      ['SCAN_VERIFIED', verified],
      ['SEALED', sealed],
      ['RENDERED', rendered],
    ] as [string, Record<string, unknown>][];
  }

  /** An outcome as status, state and error, with what names its job (ref, attempt, hashes) taken out. */
  function shape(c: ClaimedJob, o: { status: number; data?: { state: string }; error?: unknown }) {
    const error = o.error
      ? JSON.parse(
          JSON.stringify(o.error)
            .replaceAll(c.jobRef, '<job>')
            .replaceAll(c.attemptId, '<attempt>')
            .replace(/"[0-9a-f]{64}"/g, '"<sha256>"'),
        )
      : undefined;
    return { status: o.status, state: o.data?.state, error };
  }

  it('answers a mix of accepted and refused results of one job as the single route does, each seeing the earlier', async () => {
    await queue(2);
    const [a, b] = await dev.claimMany([{ name: 'zebra-1', count: 2 }]);
    const batched = await dev.results(
      (await mixed(a!)).map(([status, evidence]) => ({ c: a!, status, evidence })),
    );
    expect(batched.status, batched.text).toBe(200);
    const single: { status: number; data?: { state: string }; error?: unknown }[] = [];
    for (const [status, evidence] of await mixed(b!)) {
      const r = await dev.result(b!, status, evidence);
      single.push({
        status: r.status,
        ...(r.status === 200 ? { data: r.body.data } : { error: r.body.error }),
      });
    }
    const outcomes = batched.body.data as { status: number; data?: { state: string }; error?: unknown }[];
    expect(outcomes.map((o) => o.status)).toEqual([200, 422, 200, 409, 200, 200, 200, 409]);
    expect(outcomes.map((o) => shape(a!, o))).toEqual(single.map((o) => shape(b!, o)));
    // A refused result recorded nothing: one evidence row and one audit entry per accepted result.
    for (const c of [a!, b!]) {
      await expectSealed(c.jobRef);
    }
    expect(await audited(a!.jobRef)).toEqual(await audited(b!.jobRef));
    expect(await audited(a!.jobRef)).toHaveLength(6); // created and five results
  });

  it('replays a key used twice in one batch, refuses it with another result, and replays keys across routes', async () => {
    await queue(1);
    const [c] = await dev.claimMany([{ name: 'zebra-1' }]);
    const steps = await dev.steps(c!);
    const [k1, k2, k3, k4, k5] = steps.map(() => randomUUID());
    const step = (i: number, key: string | undefined) => ({
      c: c!,
      status: steps[i]![0],
      evidence: steps[i]![1],
      key,
    });
    const first = await dev.results([step(0, k1), step(0, k1), step(1, k1), step(1, k2)]);
    const outcomes = first.body.data as {
      status: number;
      replayed?: boolean;
      data?: { state: string };
      error?: { details: { reason: string } };
    }[];
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 409, 200]);
    expect(outcomes[1]).toMatchObject({ replayed: true, data: { state: 'RENDERED' } });
    expect(outcomes[1]!.data).toEqual(outcomes[0]!.data);
    expect(outcomes[2]!.error!.details.reason).toBe('idempotency_key_reused');
    expect(outcomes[3]).toMatchObject({ data: { state: 'SPOOL_SUBMITTED' } });
    expect(outcomes[3]!.replayed).toBeUndefined();
    // Keys a batch kept replay on the single route, and one the single route kept replays in a batch.
    const again = await dev.result(c!, steps[1]![0], steps[1]![1], k2);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(outcomes[3]!.data);
    expect((await dev.result(c!, steps[2]![0], steps[2]![1], k3)).status).toBe(200);
    const rest = await dev.results([step(2, k3), step(3, k4), step(4, k5)]);
    expect(rest.body.data.map((o: { status: number; replayed?: boolean }) => [o.status, o.replayed])).toEqual(
      [
        [200, true],
        [200, undefined],
        [200, undefined],
      ],
    );
    const s = await state(c!.jobRef);
    expect(s.state).toBe('SEALED');
    expect(s.evidence).toHaveLength(5);
    expect(await audited(c!.jobRef)).toHaveLength(6);
  });

  it('fails only the result whose transition fails, and applies the others', async () => {
    await queue(2);
    const [a, b] = await dev.claimMany([{ name: 'zebra-1', count: 2 }]);
    const result = t.cp.services.aidc!.result;
    const port = result.port;
    result.port = {
      ...port,
      confirmPrinted: (db, outcomes) =>
        outcomes.some((o) => o.jobRef === b!.jobRef)
          ? Promise.reject(new Error('the print loop is unavailable'))
          : port.confirmPrinted(db, outcomes),
    };
    const steps = [await dev.steps(a!), await dev.steps(b!)];
    try {
      const r = await dev.results(
        [a!, b!].flatMap((c, i) => steps[i]!.map(([status, evidence]) => ({ c, status, evidence }))),
      );
      expect(r.body.data.map((o: { status: number }) => o.status)).toEqual([
        200, 200, 200, 200, 200, 200, 200, 200, 200, 500,
      ]);
    } finally {
      result.port = port;
    }
    expect((await state(a!.jobRef)).state).toBe('SEALED');
    const sb = await state(b!.jobRef);
    expect(sb.state).toBe('SCAN_VERIFIED');
    expect(sb.evidence).toHaveLength(4);
    expect(sb.sealReceipt).toBeNull();
    // Nothing of b's SEALED stayed behind: sent again, it seals.
    const [status, evidence] = steps[1]![4]!;
    expect((await dev.result(b!, status, evidence)).status).toBe(200);
  });

  /**
   * On PostgreSQL: another writer locks a job's row, the batch is sent and reads it, and once the batch waits
   * for the row lock the writer changes the row (`move`) and commits. Answers the batch's pending call.
   */
  /** Two jobs claimed for zebra-1, and every step of both up to SEALED as one batch's items, in order. */
  async function twoJobsToSeal() {
    await queue(2);
    const [a, b] = await dev.claimMany([{ name: 'zebra-1', count: 2 }]);
    const steps = [await dev.steps(a!), await dev.steps(b!)];
    const items = [a!, b!].flatMap((c, i) =>
      steps[i]!.map(([status, evidence]) => ({ c, status, evidence })),
    );
    return { a, b, items };
  }

  async function whileBatchWaitsFor(
    jobRef: string,
    items: Parameters<HttpPrintDevice['results']>[0],
    move: (writer: pg.Client) => Promise<void>,
    lock = 'select job_ref from print_jobs where job_ref = $1 for update',
  ): Promise<Awaited<ReturnType<HttpPrintDevice['results']>>> {
    const writer = new pg.Client({ connectionString: t.databaseUrl! });
    await writer.connect();
    try {
      await writer.query('begin');
      await writer.query(lock, [jobRef]);
      const { rows } = await writer.query<{ pid: number }>('select pg_backend_pid() as pid');
      const pending = dev.results(items);
      for (;;) {
        const waiting = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity where ${rows[0]!.pid} = any(pg_blocking_pids(pid))`.execute(
          t.cp.store.db,
        );
        if (waiting.rows[0]!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await move(writer);
      await writer.query('commit');
      return await pending;
    } finally {
      await writer.end();
    }
  }

  it('applies a batch sent twice at once (a retry racing its original) once: both answers agree', async () => {
    const { a, b, items } = await twoJobsToSeal();
    const keyed = items.map((item) => ({ ...item, key: randomUUID() }));
    const [first, second] = await Promise.all([dev.results(keyed), dev.results(keyed)]);
    expect(first.status, first.text).toBe(200);
    expect(second.status, second.text).toBe(200);
    const answers = (r: typeof first) =>
      (r.body.data as { status: number; data?: { state: string } }[]).map((o) => [o.status, o.data?.state]);
    expect(answers(second)).toEqual(answers(first));
    expect(answers(first).every(([status]) => status === 200)).toBe(true);
    await expectSealed(a!.jobRef);
    await expectSealed(b!.jobRef);
    // Each result written once: one audit entry per result, one seal receipt per job.
    expect(await audited(a!.jobRef)).toHaveLength(6);
    expect(await audited(b!.jobRef)).toHaveLength(6);
    const receipts = await t.cp.store.db
      .selectFrom('seal_receipts')
      .select('job_ref')
      .where('job_ref', 'in', [a!.jobRef, b!.jobRef])
      .execute();
    expect(receipts).toHaveLength(2);
  });

  it('answers from the job as it is when another writer moves it while the batch runs', async () => {
    const { a, b, items } = await twoJobsToSeal();
    const iso = new Date().toISOString();
    let pending: ReturnType<HttpPrintDevice['results']> | undefined;
    if (dialect === 'postgres') {
      // Another writer holds b's row: the batch reads it as claimed, checks its results, and waits at b's
      // guarded UPDATE; then the writer reaps b (its lease ran out before the label was sent) and commits.
      pending = whileBatchWaitsFor(b!.jobRef, items, async (writer) => {
        await writer.query(
          "update print_jobs set state = 'FAILED', last_error = 'lease_expired', lease_expires_at = null, updated_at = $2 where job_ref = $1",
          [b!.jobRef, iso],
        );
        await writer.query(
          "update print_attempts set state = 'FAILED', failure_reason = 'lease_expired', ended_at = $2 where attempt_id = $1",
          [b!.attemptId, iso],
        );
      });
    } else {
      // SQLite has one writer: the batch waits for the reaper's transaction and then reads b as it left it.
      await t.cp.store.db.transaction().execute(async (trx) => {
        pending = dev.results(items);
        await trx
          .updateTable('print_jobs')
          .set({ state: 'FAILED', last_error: 'lease_expired', lease_expires_at: null, updated_at: iso })
          .where('job_ref', '=', b!.jobRef)
          .execute();
        await trx
          .updateTable('print_attempts')
          .set({ state: 'FAILED', failure_reason: 'lease_expired', ended_at: iso })
          .where('attempt_id', '=', b!.attemptId)
          .execute();
      });
    }
    const r = await pending!;
    expect(r.status, r.text).toBe(200);
    const outcomes = r.body.data as { status: number; error?: { code: string } }[];
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200, 200, 200, 410, 410, 410, 410, 410]);
    expect(outcomes[5]!.error!.code).toBe('ENVELOPE_EXPIRED');
    expect((await state(a!.jobRef)).state).toBe('SEALED');
    const sb = await state(b!.jobRef);
    expect(sb.state).toBe('FAILED');
    expect(sb.evidence).toEqual([]);
    expect(await audited(a!.jobRef)).toHaveLength(6);
    expect(await audited(b!.jobRef)).toHaveLength(1);
  });

  it('commissions a serial once when a report prints it while the batch that seals its job runs', async () => {
    const { a, b, items } = await twoJobsToSeal();
    const { db } = t.cp.store;
    const job = await db
      .selectFrom('print_jobs')
      .select(['tenant_id', 'serial'])
      .where('job_ref', '=', a!.jobRef)
      .executeTakeFirstOrThrow();
    const printedByReport = (trx: typeof db) =>
      trx
        .updateTable('carrier_serials')
        .set({ print_status: 'printed', print_source: 'api', print_reported_at: new Date().toISOString() })
        .where('tenant_id', '=', job.tenant_id)
        .where('serial', '=', job.serial)
        .execute();
    let pending: ReturnType<HttpPrintDevice['results']> | undefined;
    if (dialect === 'postgres') {
      // Another report holds a's serial: the batch reads it unprinted, checks its results, and waits at the
      // serial's guarded UPDATE; then the report prints it and commits. Written from the read, the seal would
      // commission the serial a second time.
      pending = whileBatchWaitsFor(
        a!.jobRef,
        items,
        async (writer) => {
          await writer.query(
            "update carrier_serials set print_status = 'printed', print_source = 'api' where (tenant_id, serial) = (select tenant_id, serial from print_jobs where job_ref = $1)",
            [a!.jobRef],
          );
        },
        'select 1 from carrier_serials where (tenant_id, serial) = (select tenant_id, serial from print_jobs where job_ref = $1) for update',
      );
    } else {
      // SQLite has one writer: the batch waits for the report's transaction and reads the serial printed.
      await db.transaction().execute(async (trx) => {
        pending = dev.results(items);
        await printedByReport(trx);
      });
    }
    const r = await pending!;
    expect(r.status, r.text).toBe(200);
    expect((r.body.data as { status: number }[]).every((o) => o.status === 200)).toBe(true);
    await expectSealed(a!.jobRef);
    await expectSealed(b!.jobRef);
    const receipts = await db
      .selectFrom('seal_receipts')
      .select(['job_ref', 'epcis_event_id'])
      .where('job_ref', 'in', [a!.jobRef, b!.jobRef])
      .execute();
    const eventOf = new Map(receipts.map((x) => [x.job_ref, x.epcis_event_id]));
    // a's serial was printed before its seal: no commissioning event of its own; b's has one.
    expect(eventOf.get(a!.jobRef)).toBeNull();
    expect(eventOf.get(b!.jobRef)).toEqual(expect.any(String));
    const serialA = await db
      .selectFrom('carrier_serials')
      .select(['print_status', 'print_source'])
      .where('tenant_id', '=', job.tenant_id)
      .where('serial', '=', job.serial)
      .executeTakeFirstOrThrow();
    expect(serialA).toEqual({ print_status: 'printed', print_source: 'aidc' });
  });

  it("seals a registered serial's job and a counter serial's in one batch, each serial printed and commissioned", async () => {
    // What earlier tests left waiting (a job failed with retries left) is sealed first.
    const drain = () => dev.claimMany([{ name: 'zebra-1', count: 4 }]);
    for (let left = await drain(); left.length > 0; left = await drain()) await dev.sealMany(left);
    const p = await journey(t.call, admin, 1);
    const registered = `R-${randomUUID().slice(0, 8)}`;
    const reg = await t.call('POST', '/api/v2/carriers/batch', {
      key: admin,
      body: { productId: p.productId, serials: [registered] },
    });
    expect(reg.status, reg.text).toBe(201);
    for (const serial of [p.serials[0]!, registered]) {
      const r = await t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial } });
      expect(r.status, r.text).toBe(201);
    }
    const claims = await dev.claimMany([{ name: 'zebra-1', count: 2 }]);
    expect(claims.map((c) => c.job.serial).sort()).toEqual([p.serials[0]!, registered].sort());
    await dev.sealMany(claims);
    const db = t.cp.store.db;
    for (const c of claims) {
      await expectSealed(c.jobRef);
      const receipt = await db
        .selectFrom('seal_receipts')
        .select('epcis_event_id')
        .where('job_ref', '=', c.jobRef)
        .executeTakeFirstOrThrow();
      expect(receipt.epcis_event_id, c.job.serial).toEqual(expect.any(String));
    }
    const printed = await db
      .selectFrom('carrier_serials')
      .select(['serial', 'print_status', 'print_source'])
      .where('product_id', '=', p.productId)
      .where('serial', 'in', [p.serials[0]!, registered])
      .orderBy('serial')
      .execute();
    expect(printed).toEqual(
      [p.serials[0]!, registered]
        .sort()
        .map((serial) => ({ serial, print_status: 'printed', print_source: 'aidc' })),
    );
  });

  describe('a device remembered from its last call claims only while it is what a read finds now', () => {
    // In tenant b, whose queue no other test of this file fills: an empty claim is one with no work.
    const adminB = () => t.tenants.b.admin;
    const stateB = async (ref: string) =>
      (await t.call('GET', `/api/v2/aidc/jobs/${ref}`, { key: adminB() })).body.data as { state: string };

    /** A device of its own printer, read once by a call of its own (it is then remembered). */
    async function rememberedDevice(printer: string) {
      const enrolled = await enrollTestDevice(t, adminB(), { printerNames: [printer] });
      const device = await new HttpPrintDevice(t.call, enrolled).init();
      const read = await t.call('GET', `/api/v2/devices/${enrolled.id}`, { key: device.token });
      expect(read.status, read.text).toBe(200);
      return { enrolled, device };
    }

    /** A job of tenant b, left waiting. */
    async function jobB(): Promise<string> {
      const p = await journey(t.call, adminB(), 1);
      const r = await t.call('POST', '/api/v2/aidc/jobs', {
        key: adminB(),
        body: { gtin: p.gtin, serial: p.serials[0] },
      });
      expect(r.status, r.text).toBe(201);
      return r.body.data.jobRef as string;
    }

    /** Runs `fn` while tenant b has another name than its devices' principals were read with. */
    async function whileTenantRenamed(fn: () => Promise<void>): Promise<void> {
      const { db } = t.cp.store;
      const { id, name } = await db
        .selectFrom('tenants')
        .select(['id', 'name'])
        .where('id', '=', t.tenants.b.id)
        .executeTakeFirstOrThrow();
      await db
        .updateTable('tenants')
        .set({ name: `${name} (renamed)` })
        .where('id', '=', id)
        .execute();
      try {
        await fn();
      } finally {
        await db.updateTable('tenants').set({ name }).where('id', '=', id).execute();
      }
    }

    it('refuses a revoked device 401 on both claim routes and claims nothing, the job left waiting', async () => {
      const { enrolled, device } = await rememberedDevice('zebra-31');
      const ref = await jobB();
      const revoked = await t.call('POST', `/api/v2/devices/${enrolled.id}/revoke`, { key: adminB() });
      expect(revoked.status).toBe(200);
      const batch = await t.call('POST', '/api/v2/aidc/jobs/claims', {
        key: device.token,
        body: { printers: [{ name: 'zebra-31', rfid: true }] },
      });
      expect(batch.status, batch.text).toBe(401);
      const single = await t.call('POST', '/api/v2/aidc/jobs/claim', {
        key: device.token,
        body: { printer: { name: 'zebra-31', rfid: true } },
      });
      expect(single.status, single.text).toBe(401);
      expect((await stateB(ref)).state).toBe('QUEUED');
      const attempts = await t.cp.store.db
        .selectFrom('print_attempts')
        .select('attempt_id')
        .where('job_ref', '=', ref)
        .execute();
      expect(attempts).toEqual([]);
      // Another device of the tenant takes it.
      const { device: next } = await rememberedDevice('zebra-32');
      const [claimed] = await next.claimMany([{ name: 'zebra-32' }]);
      expect(claimed?.jobRef).toBe(ref);
      await next.sealMany([claimed!]);
      expect((await stateB(ref)).state).toBe('SEALED');
    });

    it('claims for the device as read now when its tenant changed since, and refuses as that read decides', async () => {
      const { device } = await rememberedDevice('zebra-33');
      const ref = await jobB();
      await whileTenantRenamed(async () => {
        const [claimed] = await device.claimMany([{ name: 'zebra-33' }]);
        expect(claimed?.jobRef).toBe(ref);
        await device.sealMany([claimed!]);
        expect((await stateB(ref)).state).toBe('SEALED');
        // Remembered as read now: a printer it is not enrolled for is refused as before.
        const other = await t.call('POST', '/api/v2/aidc/jobs/claims', {
          key: device.token,
          body: { printers: [{ name: 'zebra-39' }] },
        });
        expect(other.status).toBe(403);
        expect(other.body.error).toMatchObject({ code: 'FORBIDDEN', details: { printer: 'zebra-39' } });
      });
    });

    it('refuses a revoked device 401 on the results batch, applying none of it', async () => {
      const { enrolled, device } = await rememberedDevice('zebra-35');
      const ref = await jobB();
      const [claimed] = await device.claimMany([{ name: 'zebra-35' }]);
      expect(claimed?.jobRef).toBe(ref);
      const steps = await device.steps(claimed!);
      const items = steps.map(([status, evidence]) => ({ c: claimed!, status, evidence }));
      expect((await t.call('POST', `/api/v2/devices/${enrolled.id}/revoke`, { key: adminB() })).status).toBe(
        200,
      );
      const r = await device.results(items);
      expect(r.status, r.text).toBe(401);
      const job = (await t.call('GET', `/api/v2/aidc/jobs/${ref}`, { key: adminB() })).body.data as {
        state: string;
        evidence: unknown[];
      };
      expect(job.state).toBe('CLAIMED');
      expect(job.evidence).toEqual([]);
    });

    it('applies a results batch for the device as read now when its tenant changed since', async () => {
      const { device } = await rememberedDevice('zebra-36');
      const ref = await jobB();
      const [claimed] = await device.claimMany([{ name: 'zebra-36' }]);
      await whileTenantRenamed(async () => {
        await device.sealMany([claimed!]);
        expect((await stateB(ref)).state).toBe('SEALED');
      });
    });

    it('refuses as the route does the device as read now: a sandbox expired since is 403 SANDBOX_EXPIRED', async () => {
      const { device } = await rememberedDevice('zebra-37');
      const ref = await jobB();
      const { db } = t.cp.store;
      const before = await db
        .selectFrom('tenants')
        .select(['id', 'sandbox', 'sandbox_expires_at'])
        .where('id', '=', t.tenants.b.id)
        .executeTakeFirstOrThrow();
      await db
        .updateTable('tenants')
        .set({ sandbox: 1, sandbox_expires_at: '2001-01-01T00:00:00.000Z' })
        .where('id', '=', before.id)
        .execute();
      try {
        const r = await t.call('POST', '/api/v2/aidc/jobs/claims', {
          key: device.token,
          body: { printers: [{ name: 'zebra-37', rfid: true }] },
        });
        expect(r.status, r.text).toBe(403);
        expect(r.body.error.code).toBe('SANDBOX_EXPIRED');
        // Read in the database: the tenant's own keys are refused as well while its sandbox is expired.
        const job = await db
          .selectFrom('print_jobs')
          .select('state')
          .where('job_ref', '=', ref)
          .executeTakeFirstOrThrow();
        expect(job.state).toBe('QUEUED');
      } finally {
        await db
          .updateTable('tenants')
          .set({ sandbox: before.sandbox, sandbox_expires_at: before.sandbox_expires_at })
          .where('id', '=', before.id)
          .execute();
      }
      // Its job is still there for it.
      const [claimed] = await device.claimMany([{ name: 'zebra-37' }]);
      expect(claimed?.jobRef).toBe(ref);
      await device.sealMany([claimed!]);
    });

    it('seals with the key a device rotated to since it was remembered with the old one', async () => {
      const { enrolled, device } = await rememberedDevice('zebra-38');
      const ref = await jobB();
      const [claimed] = await device.claimMany([{ name: 'zebra-38' }]);
      expect(claimed?.jobRef).toBe(ref);
      const next = await newDeviceKey();
      const proof = await keyRotationProof(next, enrolled.id);
      const rotated = await t.call('POST', `/api/v2/devices/${enrolled.id}/rotate-key`, {
        key: device.token,
        body: { publicKeyJwk: next.publicJwk, proof },
      });
      expect(rotated.status, rotated.text).toBe(200);
      // Its evidence bundles are signed with the new key now; its access token is the one it had.
      const renewed = new HttpPrintDevice(t.call, { ...enrolled, key: next });
      renewed.token = device.token;
      await renewed.sealMany([claimed!]);
      expect((await stateB(ref)).state).toBe('SEALED');
    });

    it('answers a claim with no work as before: [] on the batch route, 204 on the single one', async () => {
      const { device } = await rememberedDevice('zebra-34');
      expect(await device.claimMany([{ name: 'zebra-34', count: 3 }])).toEqual([]);
      const single = await t.call('POST', '/api/v2/aidc/jobs/claim', {
        key: device.token,
        body: { printer: { name: 'zebra-34', rfid: false } },
      });
      expect(single.status, single.text).toBe(204);
    });
  });

  it.runIf(dialect === 'postgres')(
    'fences a job claimed again by another attempt while the batch runs, though its state is the same',
    async () => {
      const { a, b, items } = await twoJobsToSeal();
      // Only the attempt tells the batch's b from the job now: still CLAIMED, its lease live.
      const other = randomUUID();
      const r = await whileBatchWaitsFor(b!.jobRef, items, async (writer) => {
        await writer.query(
          'update print_jobs set attempt_id = $2, attempt_count = attempt_count + 1 where job_ref = $1',
          [b!.jobRef, other],
        );
      });
      expect(r.status, r.text).toBe(200);
      const outcomes = r.body.data as { status: number; error?: { code: string } }[];
      expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200, 200, 200, 409, 409, 409, 409, 409]);
      expect(outcomes[5]!.error!.code).toBe('STALE_ATTEMPT');
      expect((await state(a!.jobRef)).state).toBe('SEALED');
      const sb = await state(b!.jobRef);
      expect(sb.state).toBe('CLAIMED');
      expect(sb.evidence).toEqual([]);
    },
  );
});
