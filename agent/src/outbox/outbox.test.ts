/**
 * The outbox on a real SQLite file. The sender is a small in-memory state machine with the control
 * plane's contract (results in order per job, Idempotency-Key replay, fencing by attempt), which can be
 * made unreachable or lose answers; a crash is closing the database and opening the file again.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResultState } from '@dpp/shared';
import type { BatchAnswer, BatchedResultBody, ResultBody } from '../api/index.js';
import { AgentError } from '../errors.js';
import { silentLogger } from '../log.js';
import { openAgentDatabase, type AgentDatabase } from '../store/index.js';
import { Outbox } from './outbox.js';
import { pruneSettled } from './rows.js';

const NEXT: Record<string, ResultState> = {
  CLAIMED: 'RENDERED',
  RENDERED: 'SPOOL_SUBMITTED',
  SPOOL_SUBMITTED: 'PRINTED_ATTESTED',
  PRINTED_ATTESTED: 'SCAN_VERIFIED',
  SCAN_VERIFIED: 'SEALED',
};

/** The control plane's result contract, in memory. */
class FakeStateMachine {
  jobs = new Map<string, { state: string; attemptId: string }>();
  replies = new Map<string, string>();
  /** Transitions applied, in order: `${jobRef}:${status}`. */
  applied: string[] = [];
  calls: Array<{ jobRef: string; status: string; key: string }> = [];
  down = false;
  /** The next n calls commit, then the answer is lost. */
  loseAnswers = 0;
  /** The next n calls commit without their replay being visible yet (a twin still committing), answer lost. */
  loseAnswersBeforeReplay = 0;
  failWith500 = new Set<string>();

  claim(jobRef: string, attemptId: string) {
    this.jobs.set(jobRef, { state: 'CLAIMED', attemptId });
  }

  async reportResult(jobRef: string, body: ResultBody, key: string): Promise<unknown> {
    this.calls.push({ jobRef, status: body.status, key });
    if (this.down) throw new AgentError('NETWORK', 'ECONNREFUSED');
    if (this.failWith500.has(jobRef)) throw new AgentError('HTTP', 'boom', { status: 500 });
    const replay = this.replies.get(key);
    if (replay) return { state: replay };
    const job = this.jobs.get(jobRef);
    if (!job) throw new AgentError('HTTP', 'not found', { status: 404 });
    if (job.attemptId !== body.attempt_id)
      throw new AgentError('HTTP', 'stale', { status: 409, apiCode: 'STALE_ATTEMPT' });
    const ok = body.status === 'FAILED' ? job.state !== 'FAILED' : NEXT[job.state] === body.status;
    if (!ok) throw new AgentError('HTTP', 'invalid', { status: 409, apiCode: 'INVALID_TRANSITION' });
    job.state = body.status;
    this.applied.push(`${jobRef}:${body.status}`);
    if (this.loseAnswersBeforeReplay > 0) {
      this.loseAnswersBeforeReplay--;
      throw new AgentError('TIMEOUT', 'answer lost while the twin commits');
    }
    this.replies.set(key, job.state);
    if (this.loseAnswers > 0) {
      this.loseAnswers--;
      throw new AgentError('TIMEOUT', 'answer lost');
    }
    return { state: job.state };
  }

  async alreadyApplied(jobRef: string, body: ResultBody): Promise<boolean> {
    const job = this.jobs.get(jobRef);
    const order = Object.values(NEXT);
    return (
      job?.attemptId === body.attempt_id &&
      order.indexOf(job.state as ResultState) >= order.indexOf(body.status)
    );
  }
}

/**
 * The same contract with the batch call: results in order, each faring as its own call would; the call as
 * a whole fails while the control plane is down, or commits and loses its answer, as a single call does.
 */
class BatchingStateMachine extends FakeStateMachine {
  /** Results per batch call, in order. */
  batches: number[] = [];
  /** The control plane refuses the batch call itself (not a result in it). */
  refuseBatches = false;

  async reportResults(results: readonly BatchedResultBody[]): Promise<BatchAnswer[]> {
    this.batches.push(results.length);
    if (this.down) throw new AgentError('NETWORK', 'ECONNREFUSED');
    if (this.refuseBatches)
      throw new AgentError('HTTP', 'refused', { status: 400, apiCode: 'VALIDATION_ERROR' });
    const lose = this.loseAnswers > 0;
    if (lose) this.loseAnswers--;
    const [losing, beforeReplay] = [this.loseAnswers, this.loseAnswersBeforeReplay];
    this.loseAnswers = this.loseAnswersBeforeReplay = 0;
    const answers: BatchAnswer[] = [];
    for (const r of results) {
      try {
        await this.reportResult(r.jobRef, r.body, r.idempotencyKey);
        answers.push({ ok: true });
      } catch (error) {
        answers.push({ ok: false, error });
      }
    }
    [this.loseAnswers, this.loseAnswersBeforeReplay] = [losing, beforeReplay];
    if (lose) throw new AgentError('TIMEOUT', 'answer lost');
    return answers;
  }
}

let dir: string;
let db: AgentDatabase;
let sm: FakeStateMachine;
let outbox: Outbox;

function open(file = path.join(dir, 'agent.sqlite')): Outbox {
  db = openAgentDatabase(file);
  outbox = new Outbox({ db, sender: sm, log: silentLogger, baseBackoffMs: 10, maxBackoffMs: 40 });
  outbox.start();
  return outbox;
}

async function crash(): Promise<void> {
  await outbox.stop();
  db.close();
}

const happy: ResultState[] = ['RENDERED', 'SPOOL_SUBMITTED', 'PRINTED_ATTESTED', 'SCAN_VERIFIED', 'SEALED'];

function enqueueAll(jobRef: string, attemptId: string, statuses = happy) {
  return statuses.map((status) => outbox.enqueue({ jobRef, attemptId, status, evidence: { n: status } }));
}

describe.each([
  ['one call per result', false],
  ['the due results of several jobs in one call', true],
])('Outbox, %s', (_name, batching) => {
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-outbox-'));
    sm = batching ? new BatchingStateMachine() : new FakeStateMachine();
    open();
  });
  afterEach(async () => {
    await outbox.stop();
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers each job in order with one stable key per result', async () => {
    sm.claim('job_a', 'att-a');
    sm.claim('job_b', 'att-b');
    const a = enqueueAll('job_a', 'att-a');
    const b = enqueueAll('job_b', 'att-b');
    const settled = await Promise.all([...a, ...b].map((r) => outbox.settled(r.id)));
    expect(settled.every((s) => s.state === 'delivered')).toBe(true);
    expect(sm.applied.filter((x) => x.startsWith('job_a'))).toEqual(happy.map((s) => `job_a:${s}`));
    expect(sm.applied.filter((x) => x.startsWith('job_b'))).toEqual(happy.map((s) => `job_b:${s}`));
    expect(new Set(sm.calls.map((c) => c.key)).size).toBe(10);
    expect(outbox.counts()).toMatchObject({ pending: 0, delivered: 10 });
  });

  it('waits out an unreachable control plane and drains in order after, nothing twice', async () => {
    sm.claim('job_a', 'att-a');
    sm.down = true;
    let unreachable = 0;
    outbox.events.on('unreachable', () => unreachable++);
    const rows = enqueueAll('job_a', 'att-a');
    await expect.poll(() => sm.calls.length).toBeGreaterThan(3);
    expect(new Set(sm.calls.map((c) => c.status))).toEqual(new Set(['RENDERED'])); // only the head is tried
    expect(outbox.controlPlaneReachable).toBe(false);
    expect(outbox.counts().pending).toBe(5);
    sm.down = false;
    await Promise.all(rows.map((r) => outbox.settled(r.id)));
    expect(sm.applied).toEqual(happy.map((s) => `job_a:${s}`));
    expect(unreachable).toBe(1);
    expect(outbox.controlPlaneReachable).toBe(true);
  });

  it('survives a crash: rows queued before it are delivered after a reopen, with their keys', async () => {
    sm.claim('job_a', 'att-a');
    sm.down = true;
    const rows = enqueueAll('job_a', 'att-a');
    const keys = outbox.rowsOf('job_a').map((r) => r.idempotency_key);
    await expect.poll(() => sm.calls.length).toBeGreaterThan(0);
    await crash();
    sm.down = false;
    open();
    await Promise.all(rows.map((r) => outbox.settled(r.id)));
    expect(sm.applied).toEqual(happy.map((s) => `job_a:${s}`));
    expect(outbox.rowsOf('job_a').map((r) => r.idempotency_key)).toEqual(keys);
    expect(new Set(sm.calls.filter((c) => c.status === 'SEALED').map((c) => c.key))).toEqual(
      new Set([keys[4]]),
    );
  });

  it('replays with the same key when an answer was lost, so the job moves once', async () => {
    sm.claim('job_a', 'att-a');
    sm.loseAnswers = 2;
    const rows = enqueueAll('job_a', 'att-a');
    await Promise.all(rows.map((r) => outbox.settled(r.id)));
    expect(sm.applied).toEqual(happy.map((s) => `job_a:${s}`));
    const rendered = sm.calls.filter((c) => c.status === 'RENDERED');
    expect(rendered.length).toBe(2);
    expect(rendered[0]!.key).toBe(rendered[1]!.key);
  });

  it('takes a 409 INVALID_TRANSITION on a retry for what it is when the job already shows the result', async () => {
    sm.claim('job_a', 'att-a');
    sm.loseAnswersBeforeReplay = 1;
    const rows = enqueueAll('job_a', 'att-a', ['RENDERED', 'SPOOL_SUBMITTED']);
    const settled = await Promise.all(rows.map((r) => outbox.settled(r.id)));
    expect(settled.map((s) => s.state)).toEqual(['delivered', 'delivered']);
    expect(sm.applied).toEqual(['job_a:RENDERED', 'job_a:SPOOL_SUBMITTED']);
    // A first try refused the same way is a real refusal.
    const wrong = outbox.enqueue({ jobRef: 'job_a', attemptId: 'att-a', status: 'RENDERED', evidence: {} });
    await expect(outbox.settled(wrong.id)).resolves.toMatchObject({
      state: 'rejected',
      code: 'INVALID_TRANSITION',
    });
  });

  it('records a final refusal, skips the steps after it, but still sends a FAILED', async () => {
    sm.claim('job_a', 'att-new'); // the job was re-claimed: our attempt is stale
    const rows = enqueueAll('job_a', 'att-old', ['RENDERED', 'SPOOL_SUBMITTED', 'FAILED']);
    const [r1, r2, r3] = await Promise.all(rows.map((r) => outbox.settled(r.id)));
    expect(r1).toMatchObject({ state: 'rejected', code: 'STALE_ATTEMPT', httpStatus: 409 });
    expect(r2).toMatchObject({ state: 'skipped', code: 'PREDECESSOR_REJECTED' });
    expect(r3).toMatchObject({ state: 'rejected', code: 'STALE_ATTEMPT' });
    expect(sm.calls.map((c) => c.status)).toEqual(['RENDERED', 'FAILED']);
    expect(sm.applied).toEqual([]);
    // Later attempts of the same job are not held up by the refused rows.
    sm.claim('job_a', 'att-3');
    const next = outbox.enqueue({ jobRef: 'job_a', attemptId: 'att-3', status: 'RENDERED', evidence: {} });
    await expect(outbox.settled(next.id)).resolves.toMatchObject({ state: 'delivered' });
  });

  it('keeps one job in backoff without holding up the others', async () => {
    sm.claim('job_a', 'att-a');
    sm.claim('job_b', 'att-b');
    sm.failWith500.add('job_a');
    const a = outbox.enqueue({ jobRef: 'job_a', attemptId: 'att-a', status: 'RENDERED', evidence: {} });
    const b = enqueueAll('job_b', 'att-b');
    await Promise.all(b.map((r) => outbox.settled(r.id)));
    expect(outbox.rowsOf('job_a')[0]).toMatchObject({ state: 'pending', error_code: 'HTTP' });
    sm.failWith500.clear();
    await expect(outbox.settled(a.id)).resolves.toMatchObject({ state: 'delivered' });
  });

  it('tries again at once when the control plane is known to be back, not after a long backoff', async () => {
    await outbox.stop();
    outbox = new Outbox({ db, sender: sm, log: silentLogger, baseBackoffMs: 60_000, maxBackoffMs: 60_000 });
    outbox.start();
    sm.claim('job_a', 'att-a');
    sm.down = true;
    const row = outbox.enqueue({ jobRef: 'job_a', attemptId: 'att-a', status: 'RENDERED', evidence: {} });
    await expect.poll(() => outbox.controlPlaneReachable).toBe(false);
    sm.down = false;
    await new Promise((r) => setTimeout(r, 200));
    expect(outbox.counts().pending).toBe(1); // still waiting out its backoff
    outbox.retryNow();
    await expect(outbox.settled(row.id)).resolves.toMatchObject({ state: 'delivered' });
  });

  it('prunes old settled rows but never a pending one', async () => {
    sm.claim('job_a', 'att-a');
    const rows = enqueueAll('job_a', 'att-a');
    await Promise.all(rows.map((r) => outbox.settled(r.id)));
    sm.down = true;
    outbox.enqueue({ jobRef: 'job_z', attemptId: 'att-z', status: 'RENDERED', evidence: {} });
    expect(pruneSettled(db, 2)).toBe(3);
    expect(outbox.counts()).toMatchObject({ delivered: 2, pending: 1 });
  });

  it.runIf(batching)(
    'sends the due heads of several jobs in one call, each with its own answer',
    async () => {
      for (const j of ['a', 'b', 'c']) sm.claim(`job_${j}`, `att-${j}`);
      sm.down = true;
      const rows = ['a', 'b', 'c'].flatMap((j) =>
        enqueueAll(`job_${j}`, `att-${j}`, ['RENDERED', 'SPOOL_SUBMITTED']),
      );
      const stale = outbox.enqueue({ jobRef: 'job_z', attemptId: 'att-z', status: 'RENDERED', evidence: {} });
      await expect.poll(() => (sm as BatchingStateMachine).batches.length).toBeGreaterThan(0);
      sm.down = false;
      outbox.retryNow();
      const settled = await Promise.all(rows.map((r) => outbox.settled(r.id)));
      expect(settled.every((x) => x.state === 'delivered')).toBe(true);
      await expect(outbox.settled(stale.id)).resolves.toMatchObject({ state: 'rejected', httpStatus: 404 });
      // The three jobs' and the unknown job's heads together, then the three jobs' next steps.
      expect((sm as BatchingStateMachine).batches.slice(-2)).toEqual([4, 3]);
      for (const j of ['a', 'b', 'c'])
        expect(sm.applied.filter((x) => x.startsWith(`job_${j}`))).toEqual([
          `job_${j}:RENDERED`,
          `job_${j}:SPOOL_SUBMITTED`,
        ]);
    },
  );

  it.runIf(batching)('sends each result alone when the batch call itself is refused', async () => {
    (sm as BatchingStateMachine).refuseBatches = true;
    sm.claim('job_a', 'att-a');
    sm.claim('job_b', 'att-b');
    sm.down = true;
    const rows = [...enqueueAll('job_a', 'att-a'), ...enqueueAll('job_b', 'att-b')];
    await expect.poll(() => sm.calls.length + (sm as BatchingStateMachine).batches.length).toBeGreaterThan(0);
    sm.down = false;
    outbox.retryNow();
    const settled = await Promise.all(rows.map((r) => outbox.settled(r.id)));
    expect(settled.every((x) => x.state === 'delivered')).toBe(true);
    expect(sm.applied.filter((x) => x.startsWith('job_a'))).toEqual(happy.map((x) => `job_a:${x}`));
    expect((sm as BatchingStateMachine).batches.length).toBeGreaterThan(0);
  });
});
