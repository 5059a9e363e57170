import { setMaxListeners } from 'node:events';
import { signWebhook } from '@dpp/shared';
import type { Logger } from '../logging/logger.js';
import type { Db, Dialect, SecretBox } from '../store/index.js';
import {
  type ClaimedDelivery,
  claimDueDeliveries,
  claimDueDeliveriesBatch,
  endpointForAttempt,
  releaseClaims,
} from './claim.js';
import { recordAttempt } from './record-attempt.js';
import {
  DEFAULT_DISABLE_AFTER_MS,
  DEFAULT_JITTER_RATIO,
  DEFAULT_RETRY_SCHEDULE_MS,
  type RetrySchedule,
  nextRetryDelay,
  parseRetryAfter,
  verdictOf,
} from './schedule.js';
import { type SendResult, WebhookSender } from './sender.js';
import type { WebhookUrlPolicy } from './url-policy.js';

export const WEBHOOK_USER_AGENT = 'dpp-webhooks/1';

/**
 * A worker holds up to this many times its concurrency in claimed deliveries (per endpoint and
 * overall): the surplus waits here for a slot, so one claim serves several attempts.
 */
const PREFETCH = 4;

/** Tuning of the delivery worker; every field has a production default. */
export interface DeliveryTuning {
  /** Delay after attempt n before attempt n + 1; its length is the number of retries. */
  retryScheduleMs: readonly number[];
  /** Each delay moves by up to this fraction, at random. */
  jitterRatio: number;
  random: () => number;
  /** Whole-exchange timeout of one attempt. */
  timeoutMs: number;
  /** Attempts in flight at once, over all endpoints. */
  concurrency: number;
  /** Attempts in flight at once to one endpoint. */
  perEndpointConcurrency: number;
  /** Idle poll interval; `wake()` short-cuts it. */
  pollMs: number;
  /**
   * How long a claim hides a delivery from other workers (a crashed worker's claims expire after it).
   * Covers the wait for a slot plus the attempt; default four timeouts plus a minute.
   */
  lockMs: number;
  /** An endpoint whose attempts have all failed for this long is disabled. */
  disableAfterMs: number;
}

export const DEFAULT_DELIVERY_TUNING: DeliveryTuning = {
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
  jitterRatio: DEFAULT_JITTER_RATIO,
  random: Math.random,
  timeoutMs: 10_000,
  concurrency: 64,
  perEndpointConcurrency: 8,
  pollMs: 1_000,
  lockMs: 100_000,
  disableAfterMs: DEFAULT_DISABLE_AFTER_MS,
};

export interface DeliveryWorkerOptions extends Partial<DeliveryTuning> {
  db: Db;
  /** Opens endpoint secrets (sealed at rest with SECRETS_KEY). */
  secrets: SecretBox;
  dialect: Dialect;
  log: Logger;
  policy: WebhookUrlPolicy;
  now?: () => number;
}

/** Deliveries of one endpoint this worker holds: attempts running, and claimed ones waiting for a slot. */
interface EndpointSlot {
  running: number;
  waiting: ClaimedDelivery[];
}

/**
 * Sends queued deliveries: claims due ones, POSTs each signed with its endpoint's current secret,
 * records the attempt and schedules the next with backoff. Attempts run concurrently, at most
 * `concurrency` overall and `perEndpointConcurrency` per endpoint, so a slow endpoint holds only its
 * own slots and never delays the others. Claims are taken in batches of up to four times those
 * numbers (the surplus waits here for a slot), so that a claim costs two statements per batch rather
 * than per delivery. Several workers (replicas) share the queue through the database.
 */
export class DeliveryWorker {
  readonly tuning: DeliveryTuning;
  private readonly now: () => number;
  private readonly sender: WebhookSender;
  private readonly schedule: RetrySchedule;
  private readonly lookup: ReturnType<WebhookUrlPolicy['lookup']>;
  private readonly slots = new Map<string, EndpointSlot>();
  private readonly inflight = new Set<Promise<void>>();
  private held = 0;
  private running = 0;
  private aborter = abortController();
  private stopped = true;
  private claiming: Promise<void> | undefined;
  private pumpAgain = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: DeliveryWorkerOptions) {
    const { db: _db, dialect: _dialect, log: _log, policy: _policy, now, ...tuning } = opts;
    this.tuning = { ...DEFAULT_DELIVERY_TUNING, ...stripUndefined(tuning) };
    if (opts.lockMs === undefined) this.tuning.lockMs = PREFETCH * this.tuning.timeoutMs + 60_000;
    this.now = now ?? Date.now;
    this.lookup = opts.policy.lookup();
    this.sender = new WebhookSender({ maxSockets: this.tuning.concurrency });
    this.schedule = {
      delaysMs: this.tuning.retryScheduleMs,
      jitterRatio: this.tuning.jitterRatio,
      random: this.tuning.random,
    };
  }

  get started(): boolean {
    return !this.stopped;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.aborter = abortController();
    this.pump();
  }

  /** Asks for a claim pass now (deliveries were queued or retried in this process). */
  wake(): void {
    this.pump();
  }

  /**
   * Stops claiming, abandons attempts in flight without recording them and gives back the claims still
   * waiting for a slot (both are due again at once for the next worker: the receiver may see the same
   * delivery id twice, which rule 3 of the delivery contract covers), and closes pooled connections.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.aborter.abort();
    await this.claiming;
    const waiting = [...this.slots.values()].flatMap((s) => s.waiting.splice(0));
    await releaseClaims(this.opts.db, waiting);
    await Promise.all(this.inflight);
    this.slots.clear();
    this.held = 0;
    this.sender.close();
  }

  /**
   * One claim pass (at most `perEndpointConcurrency` per endpoint) whose attempts are all awaited;
   * returns how many were made. For tests with an injected clock, and benchmarks.
   */
  async runOnce(): Promise<number> {
    const t = this.now();
    const claimed = await claimDueDeliveries(this.opts.db, {
      now: new Date(t).toISOString(),
      lockedUntil: new Date(t + this.tuning.lockMs).toISOString(),
      limit: this.tuning.concurrency,
      perEndpoint: this.tuning.perEndpointConcurrency,
      heldByEndpoint: new Map(),
    });
    await Promise.all(claimed.map((d) => this.attempt(d)));
    return claimed.length;
  }

  /** Claims more when there is room; coalesces requests that arrive while a claim is under way. */
  private pump(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.pumpAgain = true;
      return;
    }
    const room = PREFETCH * this.tuning.concurrency - this.held;
    if (room <= 0) return; // a finishing attempt pumps again
    const t = this.now();
    const heldByEndpoint = new Map([...this.slots].map(([id, s]) => [id, s.running + s.waiting.length]));
    this.claiming = claimDueDeliveriesBatch(this.opts.db, {
      now: new Date(t).toISOString(),
      lockedUntil: new Date(t + this.tuning.lockMs).toISOString(),
      limit: room,
      perEndpoint: PREFETCH * this.tuning.perEndpointConcurrency,
      heldByEndpoint,
    })
      .then(
        async ({ claimed, saturated }) => {
          if (this.stopped) {
            await releaseClaims(this.opts.db, claimed);
            return false;
          }
          for (const d of claimed) this.hold(d);
          this.dispatch();
          // A full pass, or one that filled an endpoint and skipped its further rows: there is more.
          return claimed.length === room || saturated;
        },
        (err: unknown) => {
          this.opts.log.error({ err }, 'webhook claim failed');
          return false;
        },
      )
      .then((more) => {
        this.claiming = undefined;
        const again = this.pumpAgain || more;
        this.pumpAgain = false;
        if (again) this.pump();
        else this.poll();
      });
  }

  private poll(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pump(), this.tuning.pollMs);
    this.timer.unref();
  }

  private hold(delivery: ClaimedDelivery): void {
    let slot = this.slots.get(delivery.endpointId);
    if (!slot) {
      slot = { running: 0, waiting: [] };
      this.slots.set(delivery.endpointId, slot);
    }
    slot.waiting.push(delivery);
    this.held += 1;
  }

  /** Starts waiting deliveries while there are free slots, taking endpoints in turn. */
  private dispatch(): void {
    for (const [endpointId, slot] of [...this.slots]) {
      if (this.stopped || this.running >= this.tuning.concurrency) return;
      let started = false;
      while (
        slot.waiting.length > 0 &&
        slot.running < this.tuning.perEndpointConcurrency &&
        this.running < this.tuning.concurrency
      ) {
        this.launch(slot.waiting.shift()!, slot);
        started = true;
      }
      if (started) {
        // Round robin: an endpoint that just got slots goes to the back of the line.
        this.slots.delete(endpointId);
        this.slots.set(endpointId, slot);
      }
    }
  }

  private launch(delivery: ClaimedDelivery, slot: EndpointSlot): void {
    slot.running += 1;
    this.running += 1;
    const run = this.attempt(delivery)
      .catch((err: unknown) => {
        this.opts.log.error(
          { err, deliveryId: delivery.id, endpointId: delivery.endpointId },
          'webhook attempt could not be recorded',
        );
      })
      .finally(() => {
        this.inflight.delete(run);
        slot.running -= 1;
        this.running -= 1;
        this.held -= 1;
        if (slot.running === 0 && slot.waiting.length === 0) this.slots.delete(delivery.endpointId);
        this.dispatch();
        // Claim again once this endpoint has nothing left waiting here: a batch per endpoint, not a
        // claim per attempt. Work of other endpoints arrives by wake() or the poll.
        if (slot.waiting.length === 0) this.pump();
      });
    this.inflight.add(run);
  }

  /** One attempt of one claimed delivery: read the endpoint, sign, POST, record, schedule. */
  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const endpoint = await endpointForAttempt(this.opts.db, this.opts.secrets, delivery.endpointId);
    if (!endpoint) return; // deleted, and its deliveries with it
    if (!endpoint.enabled) {
      // Disabled while the claim waited: the delivery stays pending and resumes on re-enable.
      await releaseClaims(this.opts.db, [delivery]);
      return;
    }
    const startedAt = this.now();
    const result = await this.send(delivery, endpoint, startedAt);
    if (result.error === 'aborted') {
      await releaseClaims(this.opts.db, [delivery]);
      return;
    }
    const verdict = verdictOf(result.statusCode);
    const attemptNumber = delivery.attempts + 1;
    const finishedAt = this.now();
    const delay =
      verdict === 'retry'
        ? nextRetryDelay(this.schedule, attemptNumber, parseRetryAfter(result.retryAfter, finishedAt))
        : undefined;
    const status = verdict === 'delivered' ? 'delivered' : delay !== undefined ? 'pending' : 'failed';
    const recorded = await recordAttempt(this.opts.db, {
      delivery,
      endpointFailingSince: endpoint.failingSince,
      result,
      attemptedAt: new Date(startedAt).toISOString(),
      status,
      nextAttemptAt: delay !== undefined ? new Date(finishedAt + delay).toISOString() : null,
      disableIfFailingSince: new Date(startedAt - this.tuning.disableAfterMs).toISOString(),
    });
    const fields = {
      tenantId: delivery.tenantId,
      endpointId: delivery.endpointId,
      deliveryId: delivery.id,
      attempt: attemptNumber,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
    };
    if (!recorded.recorded) this.opts.log.info(fields, 'webhook attempt not recorded: claim lost');
    else if (status !== 'delivered') {
      this.opts.log.info({ ...fields, error: result.error, status }, 'webhook attempt failed');
    }
    if (recorded.endpointDisabled) {
      this.opts.log.warn(fields, 'webhook endpoint disabled after failing for too long');
    }
  }

  private async send(
    delivery: ClaimedDelivery,
    endpoint: { url: string; secret: string },
    at: number,
  ): Promise<SendResult> {
    const { policy } = this.opts;
    let url: URL;
    let headers: Record<string, string>;
    try {
      url = new URL(endpoint.url);
      headers = {
        ...signWebhook({
          id: delivery.id,
          timestamp: Math.floor(at / 1000),
          body: delivery.payload,
          secret: endpoint.secret,
        }),
        'Content-Type': 'application/json',
        'User-Agent': WEBHOOK_USER_AGENT,
      };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { statusCode: null, error: `cannot sign: ${message}`, durationMs: 0 };
    }
    const refused = policy.refuseLiteral(url);
    if (refused) return { statusCode: null, error: refused, durationMs: 0 };
    return this.sender.send({
      url,
      body: delivery.payload,
      headers,
      timeoutMs: this.tuning.timeoutMs,
      lookup: this.lookup,
      signal: this.aborter.signal,
    });
  }
}

/** Aborts the attempts in flight on stop; one listener per attempt, so no listener limit. */
function abortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
