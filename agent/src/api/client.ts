/**
 * The control plane's device API as the agent uses it: claim, heartbeat, result, read a job, health.
 * Every call carries a device access token (refreshed once after a 401, which means the request was
 * refused, not executed). Retries happen only where they are safe: reads and heartbeats (which only
 * extend a lease) are retried on transient faults; a claim is never retried blindly (a lost answer would
 * hold a job nobody prints until its lease expires); results are retried by the outbox, with their
 * Idempotency-Key.
 */
import { z } from 'zod';
import { JOB_STATES, LabelTemplateSchema, type ResultState } from '@dpp/shared';
import { AgentError } from '../errors.js';
import type { TokenSource } from '../identity/token-client.js';
import { httpError, httpExchange, isTransient, joinUrl, type FetchLike, type HttpAnswer } from './http.js';

export const JobViewSchema = z
  .object({
    jobRef: z.string(),
    state: z.enum(JOB_STATES),
    gtin: z.string(),
    serial: z.string(),
    digitalLink: z.string(),
    sgtin96Epc: z.string(),
    printer: z.string().nullable(),
    labelTemplate: LabelTemplateSchema,
    attemptId: z.string().nullable(),
    attemptCount: z.number().int(),
    maxAttempts: z.number().int(),
    leaseExpiresAt: z.string().nullable(),
  })
  .loose();
export type JobView = z.infer<typeof JobViewSchema>;

export const ClaimedSchema = z.object({
  data: z.object({
    job: JobViewSchema,
    attemptId: z.string(),
    envelope: z.string(),
    leaseExpiresAt: z.iso.datetime(),
  }),
});
export type Claimed = z.infer<typeof ClaimedSchema>['data'];

const HeartbeatSchema = z.object({
  data: z.object({ leaseExpiresAt: z.iso.datetime(), envelope: z.string() }),
});
export type HeartbeatAnswer = z.infer<typeof HeartbeatSchema>['data'];

export interface ResultBody {
  status: ResultState;
  evidence: Record<string, unknown>;
  attempt_id: string;
}

const HAPPY_PATH = ['RENDERED', 'SPOOL_SUBMITTED', 'PRINTED_ATTESTED', 'SCAN_VERIFIED', 'SEALED'] as const;

export interface ControlPlaneClientOptions {
  baseUrl: string;
  tokens: TokenSource;
  timeoutMs: number;
  fetch?: FetchLike;
  /** Tries of a safe call on transient faults (default 3). */
  safeTries?: number;
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class ControlPlaneClient {
  constructor(private readonly opts: ControlPlaneClientOptions) {}

  get baseUrl(): string {
    return this.opts.baseUrl;
  }

  /** POST /aidc/jobs/claim: a job for this printer, or null when there is none (204). */
  async claim(printer: { name: string; rfid: boolean }): Promise<Claimed | null> {
    const answer = await this.authed('POST', '/api/v2/aidc/jobs/claim', { printer });
    if (answer.status === 204) return null;
    if (answer.status !== 200) throw httpError('claim', answer);
    return parse(ClaimedSchema, answer, 'claim').data;
  }

  /**
   * POST /aidc/jobs/{ref}/heartbeat: extends the lease; a fresh envelope. Retried on transient faults.
   * `sending` opens the send gate: from then on the control plane holds the label for one that may be out.
   */
  async heartbeat(jobRef: string, attemptId: string, sending = false): Promise<HeartbeatAnswer> {
    return this.safely(async () => {
      const answer = await this.authed('POST', `/api/v2/aidc/jobs/${encodeURIComponent(jobRef)}/heartbeat`, {
        attempt_id: attemptId,
        ...(sending ? { sending: true } : {}),
      });
      if (answer.status !== 200) throw httpError('heartbeat', answer);
      return parse(HeartbeatSchema, answer, 'heartbeat').data;
    });
  }

  /**
   * POST /aidc/jobs/{ref}/result with its Idempotency-Key. One try: the outbox owns the retries (with the
   * same key), so a retried result replays instead of moving the job twice.
   */
  async reportResult(jobRef: string, body: ResultBody, idempotencyKey: string): Promise<JobView> {
    const answer = await this.authed('POST', `/api/v2/aidc/jobs/${encodeURIComponent(jobRef)}/result`, body, {
      'idempotency-key': idempotencyKey,
    });
    if (answer.status !== 200) throw httpError(`result ${body.status}`, answer);
    return parse(z.object({ data: JobViewSchema }), answer, 'result').data;
  }

  /**
   * Whether the job already holds this result of this attempt: same attempt, and its state is the result's
   * status or a later step of the happy path (or FAILED/DEAD_LETTER for a FAILED).
   */
  async alreadyApplied(jobRef: string, body: ResultBody): Promise<boolean> {
    const job = await this.getJob(jobRef);
    if (job.attemptId !== body.attempt_id) return false;
    if (body.status === 'FAILED') return job.state === 'FAILED' || job.state === 'DEAD_LETTER';
    const at = HAPPY_PATH.indexOf(job.state as (typeof HAPPY_PATH)[number]);
    return at >= 0 && at >= HAPPY_PATH.indexOf(body.status);
  }

  /** GET /aidc/jobs/{ref}. */
  async getJob(jobRef: string): Promise<JobView> {
    return this.safely(async () => {
      const answer = await this.authed('GET', `/api/v2/aidc/jobs/${encodeURIComponent(jobRef)}`);
      if (answer.status !== 200) throw httpError('job', answer);
      return parse(z.object({ data: JobViewSchema }), answer, 'job').data;
    });
  }

  /** GET /healthz: is the control plane up (no token needed). */
  async health(): Promise<boolean> {
    const answer = await httpExchange(
      { method: 'GET', url: joinUrl(this.opts.baseUrl, '/healthz'), timeoutMs: this.opts.timeoutMs },
      this.opts.fetch,
    );
    return answer.status === 200;
  }

  private async authed(
    method: 'GET' | 'POST',
    path: string,
    json?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpAnswer> {
    const send = async () =>
      httpExchange(
        {
          method,
          url: joinUrl(this.opts.baseUrl, path),
          headers: { ...headers, authorization: `Bearer ${await this.opts.tokens.token()}` },
          json,
          timeoutMs: this.opts.timeoutMs,
        },
        this.opts.fetch,
      );
    const answer = await send();
    if (answer.status !== 401) return answer;
    // A 401 means the request was not executed: a fresh token and one more try is safe for any call.
    this.opts.tokens.invalidate();
    return send();
  }

  private async safely<T>(call: () => Promise<T>): Promise<T> {
    const tries = this.opts.safeTries ?? 3;
    const sleep = this.opts.sleep ?? defaultSleep;
    for (let i = 1; ; i++) {
      try {
        return await call();
      } catch (err) {
        if (i >= tries || !isTransient(err)) throw err;
        await sleep(200 * 2 ** (i - 1));
      }
    }
  }
}

function parse<T>(schema: z.ZodType<T>, answer: HttpAnswer, what: string): T {
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success)
    throw new AgentError('BAD_RESPONSE', `${what}: unexpected answer (${parsed.error.issues[0]?.message})`, {
      status: answer.status,
    });
  return parsed.data;
}
