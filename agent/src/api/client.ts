/**
 * The control plane's device API as the agent uses it: claim, heartbeat, result, read a job, health.
 * Every call carries a device access token (refreshed once after a 401, which means the request was
 * refused, not executed). Retries happen only where they are safe: reads and heartbeats (which only
 * extend a lease) are retried on transient faults; a claim is never retried blindly (a lost answer would
 * hold a job nobody prints until its lease expires); results are retried by the outbox, with their
 * Idempotency-Key.
 */
import { z } from 'zod';
import {
  ClaimBatchSchema,
  type ClaimBatchRequest,
  type Claimed as ClaimAnswerData,
  ClaimedSchema,
  MAX_CLAIMS_PER_CALL,
  type ClaimRequest,
  HAPPY_PATH,
  type HeartbeatAnswer,
  HeartbeatAnswerSchema,
  type HeartbeatRequest,
  type MqttCredentials,
  MqttCredentialsSchema,
  type PrintJob,
  PrintJobSchema,
  type PrintResult,
  type ResultBatchRequest,
  ResultOutcomeSchema,
  type ResultState,
} from '@dpp/shared';
import { AgentError } from '../errors.js';
import type { TokenSource } from '../identity/token-client.js';
import { httpError, httpExchange, isTransient, joinUrl, type FetchLike, type HttpAnswer } from './http.js';

export type { HeartbeatAnswer };
/** A claim as the agent works with it: the wire answer, its `attempt_id` under the agent's own name. */
export type Claimed = Omit<ClaimAnswerData, 'attempt_id'> & { attemptId: string };
/** A job as the control plane shows it (GET /aidc/jobs/{ref} adds attempts and evidence, left unread). */
export type JobView = PrintJob;
/** The body of POST /aidc/jobs/{ref}/result, as the outbox keeps and sends it. */
export type ResultBody = PrintResult;
/** One result of a batch (POST /aidc/jobs/results): its job, its body and its own Idempotency-Key. */
export interface BatchedResultBody {
  jobRef: string;
  body: ResultBody;
  idempotencyKey: string;
}
/** A batched result's answer: taken, or the error its own call would have thrown. */
export type BatchAnswer = { ok: true } | { ok: false; error: unknown };

const ClaimAnswer = z.object({ data: ClaimedSchema });
const ClaimBatchAnswer = z.object({ data: ClaimBatchSchema });
const HeartbeatReply = z.object({ data: HeartbeatAnswerSchema });
const JobAnswer = z.object({ data: PrintJobSchema });
const CredentialsAnswer = z.object({ data: MqttCredentialsSchema });
const OutcomesAnswer = z.object({ data: z.array(ResultOutcomeSchema) });

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

/** What one printer's claim came to: its claim (null: no work), or the error its own call met. */
type ClaimAnswerOf = { ok: true; claimed: Claimed | null } | { ok: false; error: unknown };

const settle = (claim: Promise<Claimed | null>): Promise<ClaimAnswerOf> =>
  claim.then(
    (claimed) => ({ ok: true, claimed }),
    (error: unknown) => ({ ok: false, error }),
  );

/**
 * The printer a claim is for, as the control plane matches jobs to it: its name and whether it has an RFID
 * and an NFC encoder (a job whose template writes a tag goes only to a printer that can).
 */
export interface ClaimPrinter {
  name: string;
  rfid: boolean;
  nfc?: boolean | undefined;
}

/** A printer's claim waiting for the one in flight, to go with the others in one call. */
interface WaitingClaim {
  printer: ClaimPrinter;
  resolve: (claimed: Claimed | null) => void;
  reject: (err: unknown) => void;
}

/** The printer as a claim sends it: `nfc` only when it has an NFC encoder. */
function claimPrinter(p: ClaimPrinter): ClaimPrinter {
  return { name: p.name, rfid: p.rfid, ...(p.nfc ? { nfc: true } : {}) };
}

export class ControlPlaneClient {
  private claimInFlight = false;
  private readonly waitingClaims: WaitingClaim[] = [];

  constructor(private readonly opts: ControlPlaneClientOptions) {}

  get baseUrl(): string {
    return this.opts.baseUrl;
  }

  /**
   * A job for this printer, or null when there is none. A claim asked for while another is in flight waits
   * for it, and the claims that waited go together in one POST /aidc/jobs/claims (one, alone, in POST
   * /aidc/jobs/claim): a lone printer never waits, several printers share round trips. Each answer is its
   * printer's own claim; a call that fails fails each claim in it, which is never retried here.
   */
  claim(printer: ClaimPrinter): Promise<Claimed | null> {
    return new Promise((resolve, reject) => {
      this.waitingClaims.push({ printer, resolve, reject });
      if (!this.claimInFlight) this.sendWaitingClaims();
    });
  }

  private sendWaitingClaims(): void {
    if (this.waitingClaims.length === 0) return;
    const group = this.waitingClaims.splice(0, MAX_CLAIMS_PER_CALL);
    this.claimInFlight = true;
    const answers =
      group.length === 1
        ? settle(this.claimOne(group[0]!.printer)).then((a) => [a])
        : this.claimTogether(group);
    void answers
      .then(
        (settled) =>
          group.forEach((w, i) => {
            const a = settled[i]!;
            if (a.ok) w.resolve(a.claimed);
            else w.reject(a.error);
          }),
        (err: unknown) => group.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        this.claimInFlight = false;
        this.sendWaitingClaims();
      });
  }

  /**
   * Several printers' claims in one POST /aidc/jobs/claims (a printer asking twice takes two), each answer
   * handed to its printer in order. A refusal of the call itself (not a transient fault) is asked again one
   * claim per call, so each printer gets its own answer (a printer the device was not enrolled for is
   * refused alone).
   */
  private async claimTogether(group: readonly WaitingClaim[]): Promise<ClaimAnswerOf[]> {
    const printers = new Map<string, ClaimPrinter & { count: number }>();
    for (const { printer } of group) {
      const p = printers.get(printer.name);
      if (p) p.count += 1;
      else printers.set(printer.name, { ...claimPrinter(printer), count: 1 });
    }
    const request: ClaimBatchRequest = { printers: [...printers.values()] };
    const answer = await this.authed('POST', '/api/v2/aidc/jobs/claims', request);
    if (answer.status !== 200) {
      const err = httpError('claims', answer);
      if (isTransient(err)) throw err;
      const one: ClaimAnswerOf[] = [];
      for (const w of group) one.push(await settle(this.claimOne(w.printer)));
      return one;
    }
    const byPrinter = new Map<string, Claimed[]>();
    for (const { printer, attempt_id: attemptId, ...rest } of parse(ClaimBatchAnswer, answer, 'claims')
      .data) {
      byPrinter.set(printer, [...(byPrinter.get(printer) ?? []), { ...rest, attemptId }]);
    }
    return group.map((w) => ({ ok: true, claimed: byPrinter.get(w.printer.name)?.shift() ?? null }));
  }

  /** POST /aidc/jobs/claim: a job for this printer, or null when there is none (204). */
  private async claimOne(printer: ClaimPrinter): Promise<Claimed | null> {
    const request: ClaimRequest = { printer: claimPrinter(printer) };
    const answer = await this.authed('POST', '/api/v2/aidc/jobs/claim', request);
    if (answer.status === 204) return null;
    if (answer.status !== 200) throw httpError('claim', answer);
    const { attempt_id: attemptId, ...rest } = parse(ClaimAnswer, answer, 'claim').data;
    return { ...rest, attemptId };
  }

  /**
   * POST /aidc/jobs/{ref}/heartbeat: extends the lease; a fresh envelope. Retried on transient faults.
   * `sending` opens the send gate: from then on the control plane holds the label for one that may be out.
   */
  async heartbeat(jobRef: string, attemptId: string, sending = false): Promise<HeartbeatAnswer> {
    return this.safely(async () => {
      const request: HeartbeatRequest = { attempt_id: attemptId, ...(sending ? { sending: true } : {}) };
      const answer = await this.authed(
        'POST',
        `/api/v2/aidc/jobs/${encodeURIComponent(jobRef)}/heartbeat`,
        request,
      );
      if (answer.status !== 200) throw httpError('heartbeat', answer);
      return parse(HeartbeatReply, answer, 'heartbeat').data;
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
    return parse(JobAnswer, answer, 'result').data;
  }

  /**
   * POST /aidc/jobs/results: results of several jobs in one call, each with its own Idempotency-Key. For
   * each, taken, or the error {@link reportResult} would have thrown for its answer. One try, as a single
   * result; throws when the call as a whole was not taken (including an answer that does not name the
   * results it was sent, in order).
   */
  async reportResults(results: readonly BatchedResultBody[]): Promise<BatchAnswer[]> {
    const request: ResultBatchRequest = {
      results: results.map((r) => ({ ...r.body, jobRef: r.jobRef, idempotencyKey: r.idempotencyKey })),
    };
    const answer = await this.authed('POST', '/api/v2/aidc/jobs/results', request);
    if (answer.status !== 200) throw httpError('results', answer);
    const outcomes = parse(OutcomesAnswer, answer, 'results').data;
    if (outcomes.length !== results.length || outcomes.some((o, i) => o.jobRef !== results[i]!.jobRef)) {
      throw new AgentError('BAD_RESPONSE', 'results: the answer does not name the results sent, in order', {
        status: answer.status,
      });
    }
    return outcomes.map((o, i): BatchAnswer => {
      if (o.status === 200) return { ok: true };
      const what = `result ${results[i]!.body.status}`;
      return { ok: false, error: httpError(what, { ...answer, status: o.status, body: { error: o.error } }) };
    });
  }

  /**
   * Whether the job already holds this result of this attempt: same attempt, and its state is the result's
   * status or a later step of the happy path (or FAILED/DEAD_LETTER for a FAILED).
   */
  async alreadyApplied(jobRef: string, body: ResultBody): Promise<boolean> {
    const job = await this.getJob(jobRef);
    if (job.attemptId !== body.attempt_id) return false;
    if (body.status === 'FAILED') return job.state === 'FAILED' || job.state === 'DEAD_LETTER';
    const at = HAPPY_PATH.indexOf(job.state as ResultState);
    return at >= 0 && at >= HAPPY_PATH.indexOf(body.status);
  }

  /** GET /aidc/jobs/{ref}. */
  async getJob(jobRef: string): Promise<JobView> {
    return this.safely(async () => {
      const answer = await this.authed('GET', `/api/v2/aidc/jobs/${encodeURIComponent(jobRef)}`);
      if (answer.status !== 200) throw httpError('job', answer);
      return parse(JobAnswer, answer, 'job').data;
    });
  }

  /** POST /devices/{id}/mqtt-credentials: this device's broker login. Retried on transient faults. */
  async mqttCredentials(deviceId: string): Promise<MqttCredentials> {
    return this.safely(async () => {
      const answer = await this.authed(
        'POST',
        `/api/v2/devices/${encodeURIComponent(deviceId)}/mqtt-credentials`,
      );
      if (answer.status !== 200) throw httpError('mqtt credentials', answer);
      return parse(CredentialsAnswer, answer, 'mqtt credentials').data;
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
