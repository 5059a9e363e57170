import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { compactVerify, importJWK } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AttestationSchema,
  EVIDENCE_BUNDLE_TYPE,
  EvidenceBundlePayloadSchema,
  canonicalJson,
  type PrinterStatus,
} from '@dpp/shared';
import { AgentError, isAgentError } from '../errors.js';
import { generateDeviceKey } from '../identity/index.js';
import { silentLogger } from '../log.js';
import { openAgentDatabase, type AgentDatabase } from '../store/index.js';
import { claimsFor } from '@dpp/testkit/agent';
import { deviceAttestation, humanAttestation } from './attestation.js';
import { signEvidenceBundle } from './evidence-bundle.js';
import { failureOf, jobFailure } from './failures.js';
import { HumanGate } from './human-gate.js';
import { JobJournal } from './journal.js';
import { LeaseKeeper } from './lease.js';
import { Outbox, markDelivered } from '../outbox/index.js';
import { JobRun, type PipelineDeps } from './pipeline.js';
import { PrinterWorker, type PrinterWorkerOptions } from './printer-worker.js';

const at = new Date('2026-03-01T10:00:00.000Z');
const readyStatus: PrinterStatus = {
  source: 'HS',
  ready: true,
  paperOut: false,
  ribbonOut: false,
  headOpen: false,
  paused: false,
  overTemperature: false,
  underTemperature: false,
  formatsInBuffer: 0,
  partialFormat: false,
  errors: [],
  warnings: [],
};

describe('evidence bundle', () => {
  it('is a JWS by the device key over the canonical JSON of the payload', async () => {
    const { key } = await generateDeviceKey();
    const claims = claimsFor('9001');
    const payload = EvidenceBundlePayloadSchema.parse({
      jobRef: claims.job_ref,
      attemptId: claims.attempt_id,
      deviceId: 'device-1',
      envelopeJti: claims.jti,
      passportVersion: claims.passport_version,
      renderManifest: {
        language: 'zpl',
        template: 'default',
        payloadSha256: 'a'.repeat(64),
        payloadBytes: 10,
        digitalLink: claims.digital_link,
        qrVerified: true,
        renderedAt: at.toISOString(),
      },
      spoolReceipt: {
        printer: 'z',
        transport: 'serial',
        bytes: 10,
        payloadSha256: 'a'.repeat(64),
        submittedAt: at.toISOString(),
      },
      attestation: humanAttestation({ id: 'u1', name: 'Ana' }, at),
      scanResult: {
        scanner: 's',
        decodedLink: claims.digital_link,
        linkMatches: true,
        scannedAt: at.toISOString(),
      },
      sealedAt: at.toISOString(),
    });
    const jws = await signEvidenceBundle(payload, key);
    const verified = await compactVerify(jws, await importJWK({ ...key.publicJwk, alg: 'EdDSA' }, 'EdDSA'));
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA', typ: EVIDENCE_BUNDLE_TYPE, kid: key.kid });
    expect(new TextDecoder().decode(verified.payload)).toBe(canonicalJson(payload));
    await expect(signEvidenceBundle({ ...payload, sealedAt: 'yesterday' }, key)).rejects.toThrow();
  });
});

describe('attestation policy', () => {
  it('attests as the device on an RFID read-back or a clean status after the print', () => {
    const rfid = deviceAttestation(
      'dev',
      { evidence: 'printer', statusAfter: readyStatus, epcReadBack: 'AB'.repeat(12), voidLabels: 1 },
      'auto',
      at,
    );
    expect(AttestationSchema.parse(rfid)).toMatchObject({
      actor: { type: 'device', id: 'dev' },
      method: 'rfid_readback',
      epcReadBack: 'AB'.repeat(12),
      note: '1 VOID label(s) before this one',
      printerStatus: { ready: true, formatsInBuffer: 0 },
    });
    const status = deviceAttestation(
      'dev',
      { evidence: 'printer', statusAfter: readyStatus, voidLabels: 0 },
      'auto',
      at,
    );
    expect(AttestationSchema.parse(status)).toMatchObject({ method: 'printer_status' });
  });

  it('leaves it to a person without such evidence, or when the printer is set to human', () => {
    expect(deviceAttestation('dev', { evidence: 'none' }, 'auto', at)).toBeNull();
    expect(
      deviceAttestation(
        'dev',
        { evidence: 'printer', statusAfter: { ...readyStatus, ready: false, paperOut: true }, voidLabels: 0 },
        'auto',
        at,
      ),
    ).toBeNull();
    expect(
      deviceAttestation(
        'dev',
        { evidence: 'printer', statusAfter: null, epcReadBack: 'AB'.repeat(12), voidLabels: 0 },
        'human',
        at,
      ),
    ).toBeNull();
    expect(AttestationSchema.parse(humanAttestation({ id: 'u1' }, at))).toEqual({
      actor: { type: 'human', id: 'u1' },
      method: 'supervisor',
      attestedAt: at.toISOString(),
    });
  });
});

describe('HumanGate', () => {
  it('hands an attestation, a reprint or a scan to the job waiting for it, and refuses otherwise', async () => {
    const gate = new HumanGate();
    const ac = new AbortController();
    expect(() => gate.attest('job_1', { id: 'u' })).toThrow(expect.objectContaining({ code: 'NOT_WAITING' }));
    const waiting = gate.waitAttestation('job_1', 5000, ac.signal);
    expect(gate.waitingFor('job_1')).toBe('attestation');
    expect(() => gate.scan('job_1', { data: 'x' })).toThrow(expect.objectContaining({ code: 'NOT_WAITING' }));
    gate.reprint('job_1');
    await expect(waiting).resolves.toEqual({ kind: 'reprint' });
    const again = gate.waitAttestation('job_1', 5000, ac.signal);
    gate.attest('job_1', { id: 'u', name: 'Ana' }, 'ok');
    await expect(again).resolves.toEqual({
      kind: 'attest',
      supervisor: { id: 'u', name: 'Ana' },
      note: 'ok',
    });
    expect(gate.waitingFor('job_1')).toBeNull();
    const scan = gate.waitScan('job_1', 5000, ac.signal);
    gate.scan('job_1', { data: 'https://x', epc: 'A'.repeat(24) });
    await expect(scan).resolves.toEqual({ data: 'https://x', epc: 'A'.repeat(24) });
  });

  it('times out or aborts, and then no longer waits', async () => {
    const gate = new HumanGate();
    const ac = new AbortController();
    const timedOut = await gate.waitScan('job_2', 20, ac.signal).catch((e: unknown) => e);
    expect(isAgentError(timedOut, 'JOB_ABORTED')).toBe(true); // the pipeline asks again (the label is out)
    expect(gate.waitingFor('job_2')).toBeNull();
    const w = gate.waitAttestation('job_2', 5000, ac.signal);
    ac.abort(jobFailure('operator', 'label jammed'));
    const aborted = await w.catch((e: unknown) => e);
    expect(failureOf(aborted)).toEqual({ reason: 'operator', detail: 'label jammed' });
    expect(gate.waitingFor('job_2')).toBeNull();
  });
});

describe('failureOf', () => {
  it.each([
    [new AgentError('RFID_READBACK_MISMATCH', 'void'), 'rfid_void'],
    [new AgentError('PRINT_TIMEOUT', 't'), 'print_timeout'],
    [new AgentError('TRANSPORT_CLOSED', 'c'), 'line_dropped'],
    [new AgentError('PRINTER_NOT_READY', 'p'), 'printer_not_ready'],
    [new AgentError('QR_MISMATCH', 'q'), 'qr_mismatch'],
    [jobFailure('scan_noread', 'n'), 'scan_noread'],
    [new Error('boom'), 'internal'],
  ])('maps %s', (err, reason) => {
    expect(failureOf(err).reason).toBe(reason);
  });
});

describe('LeaseKeeper', () => {
  const claims = claimsFor('9100');
  function keeper(
    heartbeat: () => Promise<{ leaseExpiresAt: string; envelope: string }>,
    lost: AgentError[],
    leaseMs = 60_000,
  ) {
    return new LeaseKeeper({
      client: { heartbeat },
      verify: async () => claims,
      jobRef: claims.job_ref,
      attemptId: claims.attempt_id,
      leaseExpiresAt: Date.now() + leaseMs,
      log: silentLogger,
      onLost: (e) => lost.push(e),
    });
  }

  it('extends the lease from the heartbeat and confirms before a send', async () => {
    const lost: AgentError[] = [];
    const k = keeper(
      async () => ({ leaseExpiresAt: new Date(claims.exp * 1000).toISOString(), envelope: 'x' }),
      lost,
      10,
    );
    await k.confirm(5000);
    expect(k.leaseExpiresAt).toBe(claims.exp * 1000);
    expect(lost).toEqual([]);
  });

  it('says the attempt is lost on 409 STALE_ATTEMPT, once, and never confirms again', async () => {
    const lost: AgentError[] = [];
    let calls = 0;
    const k = keeper(async () => {
      calls++;
      throw new AgentError('HTTP', 'stale', { status: 409, apiCode: 'STALE_ATTEMPT' });
    }, lost);
    await expect(k.confirm(1000)).rejects.toSatisfy((e) => isAgentError(e, 'LEASE_LOST'));
    await expect(k.confirm(1000)).rejects.toSatisfy((e) => isAgentError(e, 'LEASE_LOST'));
    expect(calls).toBe(1);
    expect(lost).toHaveLength(1);
  });

  it('refuses to confirm with too little lease left, and passes a network fault through', async () => {
    const lost: AgentError[] = [];
    const short = keeper(
      async () => ({ leaseExpiresAt: new Date(Date.now() + 2000).toISOString(), envelope: 'x' }),
      lost,
    );
    await expect(short.confirm(5000)).rejects.toSatisfy((e) => isAgentError(e, 'LEASE_LOST'));
    const down = keeper(async () => {
      throw new AgentError('NETWORK', 'ECONNREFUSED');
    }, lost);
    await expect(down.confirm(1000)).rejects.toSatisfy((e) => isAgentError(e, 'NETWORK'));
    expect(lost).toEqual([]);
  });
});

describe('JobJournal', () => {
  let dir: string;
  let db: AgentDatabase;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-journal-'));
    db = openAgentDatabase(path.join(dir, 'agent.sqlite'));
  });
  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps each attempt with its steps, evidence and preview, newest first', () => {
    const j = new JobJournal(db);
    const first = claimsFor('9200');
    const second = { ...first, attempt_id: 'second-attempt', jti: 'jti-2' };
    j.record('zebra-1', first);
    j.addEvidence(first.attempt_id, 'render_manifest', { payloadSha256: 'x' });
    j.setError(first.attempt_id, { code: 'PRINT_TIMEOUT', message: 't', reason: 'print_timeout' });
    j.step(first.attempt_id, 'failed', true);
    j.record('zebra-1', second);
    j.setPreview(second.attempt_id, Buffer.from('png'));
    j.step(second.attempt_id, 'printing');
    const attempts = j.attempts(first.job_ref);
    expect(attempts.map((a) => [a.attemptId, a.step])).toEqual([
      ['second-attempt', 'printing'],
      [first.attempt_id, 'failed'],
    ]);
    expect(attempts[1]).toMatchObject({
      evidence: { render_manifest: { payloadSha256: 'x' } },
      error: { reason: 'print_timeout' },
    });
    expect(j.preview(first.job_ref)).toEqual(Buffer.from('png'));
    expect(j.unfinished().map((e) => e.attemptId)).toEqual(['second-attempt']);
    expect(j.prune(1)).toBe(1);
    expect(j.attempts(first.job_ref)).toHaveLength(1);
  });

  it('keeps the EPC of either scheme: an SGTIN-198 claim has no SGTIN-96', () => {
    const j = new JobJournal(db);
    const hex = '36364433400D1EE0B760C18ADF00000000000000000000000000';
    const claims = {
      ...claimsFor('9201'),
      serial: 'A7001-x',
      sgtin96_epc: null,
      epc: { scheme: 'sgtin-198' as const, hex },
    };
    j.record('zebra-1', claims);
    j.record('zebra-1', claimsFor('9202'));
    expect(
      j
        .attempts(claims.job_ref)
        .map((a) => a.epc)
        .sort(),
    ).toEqual([hex, claimsFor('9202').sgtin96_epc!].sort());
  });
});

describe('JobRun envelope checks', () => {
  let dir: string;
  let db: AgentDatabase;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-run-'));
    db = openAgentDatabase(path.join(dir, 'agent.sqlite'));
  });
  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses an envelope claimed for another printer: FAILED envelope_mismatch, nothing journalled or sent', async () => {
    const claims = claimsFor('9300', { printer: 'zebra-2' });
    const sender = { reportResult: () => Promise.reject(new Error('offline')) };
    const outbox = new Outbox({ db, sender, log: silentLogger });
    const journal = new JobJournal(db);
    let sent = 0;
    // Only what the envelope check reaches; a run that went further would fail on the missing parts.
    const deps = {
      verify: async () => claims,
      outbox,
      journal,
      log: silentLogger,
      now: Date.now,
      printerConfig: { name: 'zebra-1' },
      printer: { send: () => void sent++ },
      onStep: () => undefined,
    } as unknown as PipelineDeps;
    const run = new JobRun(deps, {
      job: { jobRef: claims.job_ref },
      attemptId: claims.attempt_id,
      envelope: 'jws',
      leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(await run.run()).toBe('failed');
    const [row] = outbox.rowsOf(claims.job_ref);
    expect(row!.status).toBe('FAILED');
    expect(JSON.parse(row!.body).evidence.failure).toMatchObject({
      reason: 'envelope_mismatch',
      detail: 'the envelope is for printer zebra-2, not zebra-1',
    });
    expect(journal.attempts(claims.job_ref)).toEqual([]);
    expect(sent).toBe(0);
  });
});

describe('PrinterWorker resuming an attempt after a restart', () => {
  let dir: string;
  let db: AgentDatabase;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-resume-'));
    db = openAgentDatabase(path.join(dir, 'agent.sqlite'));
  });
  afterEach(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A worker whose control plane says the attempt is gone (409), and whose printer prints nothing. */
  function worker(journal: JobJournal, outbox: Outbox) {
    const gone = new AgentError('HTTP', 'stale', { apiCode: 'STALE_ATTEMPT', status: 409 });
    return new PrinterWorker({
      config: { name: 'zebra-1', rfid: true },
      driver: { twoWay: false, transport: { kind: 'spool', target: 'x' } },
      client: { claim: async () => null },
      poll: { intervalMs: 60_000, idleIntervalMs: 60_000, notReadyRetryMs: 60_000, statusIntervalMs: 60_000 },
      noticesLive: () => false,
      pipeline: {
        journal,
        outbox,
        jobs: { pipelineDepth: 3 },
        client: { heartbeat: () => Promise.reject(gone) },
      },
      log: silentLogger,
      now: Date.now,
      onView: () => undefined,
    } as unknown as PrinterWorkerOptions);
  }

  it('records SEALED when SEALED was delivered before the stop, and abandons an attempt that is gone', async () => {
    const journal = new JobJournal(db);
    const outbox = new Outbox({
      db,
      sender: { reportResult: () => Promise.reject(new Error('x')) },
      log: silentLogger,
    });
    const sealed = claimsFor('9401');
    const gone = claimsFor('9402');
    for (const c of [sealed, gone]) journal.record('zebra-1', c);
    const row = outbox.enqueue({
      jobRef: sealed.job_ref,
      attemptId: sealed.attempt_id,
      status: 'SEALED',
      evidence: {},
    });
    markDelivered(db, row.id, 200, new Date().toISOString());

    for (const c of [sealed, gone]) {
      const w = worker(journal, outbox);
      w.resume([journal.attempts(c.job_ref).find((e) => e.attemptId === c.attempt_id)!], 0);
      w.start();
      await expect.poll(() => journal.unfinished().some((e) => e.attemptId === c.attempt_id)).toBe(false);
      await w.stop();
    }
    const step = (c: typeof sealed) =>
      journal.attempts(c.job_ref).find((e) => e.attemptId === c.attempt_id)!.step;
    expect(step(sealed)).toBe('sealed');
    expect(step(gone)).toBe('abandoned');
  });
});
