import { randomUUID } from 'node:crypto';
import { type LeaseColumns, claim, release } from '../queue/index.js';
import { type Db, type SecretBox, secretContext } from '../store/index.js';

/** Where deliveries keep their claim: due in next-attempt order, fenced by the claim's token. */
const DELIVERY_QUEUE: LeaseColumns<'webhook_deliveries'> = {
  table: 'webhook_deliveries',
  id: 'id',
  owner: 'claim_token',
  lockedUntil: 'locked_until',
  order: 'next_attempt_at',
};

/** A delivery claimed for one attempt. */
export interface ClaimedDelivery {
  id: string;
  tenantId: string;
  endpointId: string;
  eventType: string;
  payload: string;
  /** Attempts made before this one. */
  attempts: number;
  trigger: 'schedule' | 'manual';
  /** Fencing token: only the holder of this claim may record the attempt. */
  token: string;
}

export interface ClaimOptions {
  now: string;
  lockedUntil: string;
  /** How many deliveries to claim at most. */
  limit: number;
  /** How many deliveries of one endpoint this worker may hold at once. */
  perEndpoint: number;
  /** Deliveries this worker already holds (running or waiting for a slot), by endpoint. */
  heldByEndpoint: ReadonlyMap<string, number>;
}

/**
 * Claims due deliveries of enabled endpoints, at most `perEndpoint` held per endpoint, so that one slow
 * endpoint with a deep backlog never takes every slot. Candidates are read in due order first and then
 * locked by one guarded statement (FOR UPDATE SKIP LOCKED on PostgreSQL, so replicas share the work);
 * a row another worker locked in between is simply not returned.
 */
export async function claimDueDeliveries(db: Db, opts: ClaimOptions): Promise<ClaimedDelivery[]> {
  return (await claimDueDeliveriesBatch(db, opts)).claimed;
}

/** A claim pass and whether it left due work of an endpoint behind because that endpoint was full. */
export interface ClaimBatch {
  claimed: ClaimedDelivery[];
  /** True when due rows were skipped for an endpoint at its cap: a next pass (excluding it) finds more. */
  saturated: boolean;
}

export async function claimDueDeliveriesBatch(db: Db, opts: ClaimOptions): Promise<ClaimBatch> {
  if (opts.limit <= 0) return { claimed: [], saturated: false };
  const full = [...opts.heldByEndpoint].filter(([, n]) => n >= opts.perEndpoint).map(([id]) => id);
  const candidates = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select(['d.id', 'd.endpoint_id'])
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', opts.now)
    .where((eb) => eb.or([eb('d.locked_until', 'is', null), eb('d.locked_until', '<', opts.now)]))
    .where('e.enabled', '=', 1)
    .$if(full.length > 0, (q) => q.where('d.endpoint_id', 'not in', full))
    // Due order straight from the (status, next_attempt_at) index; no sort of the whole backlog.
    .orderBy('d.next_attempt_at')
    // A little more than asked, so one endpoint at its cap does not hide every other endpoint.
    .limit(opts.limit + opts.perEndpoint)
    .execute();

  const taken = new Map<string, number>();
  const chosen: string[] = [];
  let saturated = false;
  for (const c of candidates) {
    if (chosen.length >= opts.limit) break;
    const n = (opts.heldByEndpoint.get(c.endpoint_id) ?? 0) + (taken.get(c.endpoint_id) ?? 0);
    if (n >= opts.perEndpoint) {
      saturated = true;
      continue;
    }
    taken.set(c.endpoint_id, (taken.get(c.endpoint_id) ?? 0) + 1);
    chosen.push(c.id);
  }
  if (chosen.length === 0) return { claimed: [], saturated: false };

  const token = randomUUID();
  // Locked by one guarded statement: a row another worker claimed in between is simply not returned.
  const locked = await claim(db, DELIVERY_QUEUE, {
    now: Date.parse(opts.now),
    leaseMs: Date.parse(opts.lockedUntil) - Date.parse(opts.now),
    owner: token,
    limit: chosen.length,
    due: (eb) => eb.and([eb('status', '=', 'pending'), eb('id', 'in', chosen)]),
  });
  const claimed = locked.map((r) => ({
    id: r.id,
    tenantId: r.tenant_id,
    endpointId: r.endpoint_id,
    eventType: r.event_type,
    payload: r.payload,
    attempts: r.attempts,
    trigger: r.next_trigger === 'manual' ? ('manual' as const) : ('schedule' as const),
    token,
  }));
  return { claimed, saturated: saturated && claimed.length > 0 };
}

/** The endpoint as an attempt needs it, read right before signing so a rotated secret is never missed. */
export async function endpointForAttempt(
  db: Db,
  secrets: SecretBox,
  endpointId: string,
): Promise<{ url: string; secret: string; enabled: boolean; failingSince: string | null } | undefined> {
  const e = await db
    .selectFrom('webhook_endpoints')
    .select(['url', 'secret', 'enabled', 'failing_since'])
    .where('id', '=', endpointId)
    .executeTakeFirst();
  return (
    e && {
      url: e.url,
      secret: secrets.open(e.secret, secretContext.webhookSecret(endpointId)),
      enabled: e.enabled === 1,
      failingSince: e.failing_since,
    }
  );
}

/**
 * Gives claims back untouched (shutdown, or an endpoint disabled while they waited): due again at
 * once, no attempt recorded.
 */
export async function releaseClaims(
  db: Db,
  deliveries: readonly Pick<ClaimedDelivery, 'id' | 'token'>[],
): Promise<void> {
  for (const d of deliveries) {
    await release(db, DELIVERY_QUEUE, { id: d.id, owner: d.token }, { retryAt: null });
  }
}
