/**
 * Keeps the lease of one attempt alive while the job is in progress: a heartbeat on a timer (a third of
 * the lease by default), each answered with a fresh envelope that is verified like the first. A 409/410
 * answer means the attempt is no longer ours: the job is aborted at once, and the lease check right
 * before sending (`confirm`) makes sure a stale attempt never prints.
 */
import type { AidcEnvelopeClaims } from '@dpp/shared';
import type { ControlPlaneClient } from '../api/index.js';
import { isTransient } from '../api/index.js';
import { AgentError, toAgentError } from '../errors.js';
import type { Logger } from '../log.js';

export interface LeaseKeeperOptions {
  client: Pick<ControlPlaneClient, 'heartbeat'>;
  verify: (envelope: string) => Promise<AidcEnvelopeClaims>;
  jobRef: string;
  attemptId: string;
  leaseExpiresAt: number;
  intervalMs?: number | undefined;
  log: Logger;
  now?: () => number;
  /** Called once when the control plane says the attempt is gone. */
  onLost: (err: AgentError) => void;
}

/** Answers that mean the attempt is over for us. */
export function isLeaseLost(err: unknown): boolean {
  const e = toAgentError(err);
  return (
    e.code === 'LEASE_LOST' ||
    (e.code === 'HTTP' &&
      (e.apiCode === 'STALE_ATTEMPT' ||
        e.apiCode === 'ENVELOPE_EXPIRED' ||
        e.apiCode === 'INVALID_TRANSITION' ||
        e.status === 404))
  );
}

export class LeaseKeeper {
  private expiresAt: number;
  private timer: NodeJS.Timeout | null = null;
  private lost: AgentError | null = null;
  private readonly now: () => number;
  private beating: Promise<void> | null = null;
  private running = false;

  constructor(private readonly opts: LeaseKeeperOptions) {
    this.expiresAt = opts.leaseExpiresAt;
    this.now = opts.now ?? Date.now;
  }

  get leaseExpiresAt(): number {
    return this.expiresAt;
  }

  /**
   * Heartbeats every `intervalMs` (a third of the lease by default); after a failed one (the control plane
   * unreachable) the next try comes within a second, so a lease outlives an outage of up to the lease minus
   * a second or so, not minus a whole interval.
   */
  start(): void {
    const lease = Math.max(1000, this.expiresAt - this.now());
    const every = this.opts.intervalMs ?? Math.max(500, Math.floor(lease / 3));
    const schedule = (ms: number) => {
      if (!this.running) return;
      this.timer = setTimeout(() => {
        this.beat().then(
          () => schedule(every),
          () => {
            if (!this.lost) schedule(Math.min(every, 1000));
          },
        );
      }, ms);
      this.timer.unref();
    };
    this.running = true;
    schedule(every);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** One heartbeat now (shared with one already running). Throws LEASE_LOST, or the transient error. */
  beat(): Promise<void> {
    this.beating ??= this.heartbeat().finally(() => (this.beating = null));
    return this.beating;
  }

  private async heartbeat(sending = false): Promise<void> {
    if (this.lost) throw this.lost;
    try {
      const answer = await this.opts.client.heartbeat(this.opts.jobRef, this.opts.attemptId, sending);
      const claims = await this.opts.verify(answer.envelope);
      if (claims.job_ref !== this.opts.jobRef || claims.attempt_id !== this.opts.attemptId)
        throw new AgentError('ENVELOPE_INVALID', 'the heartbeat envelope names another job or attempt');
      this.expiresAt = Math.min(Date.parse(answer.leaseExpiresAt), claims.exp * 1000);
    } catch (err) {
      if (isLeaseLost(err)) {
        this.lost = new AgentError(
          'LEASE_LOST',
          `the attempt is no longer ours (${toAgentError(err).message})`,
          {
            cause: err,
            apiCode: toAgentError(err).apiCode,
          },
        );
        this.stop();
        this.opts.onLost(this.lost);
        throw this.lost;
      }
      if (isTransient(err))
        this.opts.log.warn({ err: toAgentError(err).message }, 'heartbeat failed; will retry');
      throw err;
    }
  }

  /**
   * The check right before the bytes go to the printer: a heartbeat that succeeds now (so the control plane
   * confirms the attempt is current) and at least `minMs` of lease left.
   */
  async confirm(minMs: number): Promise<void> {
    await this.beat();
    this.checkLeft(minMs);
  }

  /**
   * The send gate, right before the first bytes of a label go to the printer: like `confirm`, with a
   * heartbeat that tells the control plane the label is about to be sent. From then on it holds the job for
   * one whose label may be out: it never reaps it into a re-print, and renews its lease after a lapse.
   */
  async openSendGate(minMs: number): Promise<void> {
    await this.beating?.catch(() => undefined);
    await this.heartbeat(true);
    this.checkLeft(minMs);
  }

  private checkLeft(minMs: number): void {
    const left = this.expiresAt - this.now();
    if (left < minMs)
      throw new AgentError('LEASE_LOST', `only ${left} ms of lease left; not sending`, {
        details: { leftMs: left },
      });
  }
}
