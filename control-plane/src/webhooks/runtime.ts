import type { Config } from '../config/index.js';
import type { Logger } from '../logging/logger.js';
import type { OutboxBatchHandler } from '../outbox/index.js';
import type { SecretBox, Store } from '../store/index.js';
import { webhookFanOut } from './fan-out.js';
import { type HostResolver, WebhookUrlPolicy } from './url-policy.js';
import { type DeliveryTuning, DeliveryWorker } from './worker.js';

/** How the composition root runs webhooks; every field has a production default. */
export interface WebhookOptions {
  /**
   * Start the delivery worker (default true). With false, deliveries are queued but not sent: tests use
   * it to stop a control plane between the commit of an event and its delivery.
   */
  deliver?: boolean;
  /** Default: true in development and test, false in production (SSRF protection). */
  allowPrivateNetworks?: boolean;
  /** Host name resolution for the URL policy (tests hand in a fake to play DNS rebinding). */
  resolve?: HostResolver;
  /** Retry schedule, timeouts, concurrency, failure window. */
  tuning?: Partial<DeliveryTuning>;
}

export interface WebhookRuntime {
  policy: WebhookUrlPolicy;
  worker: DeliveryWorker;
  /** The outbox handler of topic `event`. */
  fanOut: OutboxBatchHandler;
  /** Start the worker unless `deliver: false`. */
  deliver: boolean;
}

/** Builds the URL policy for a configuration: private networks only outside production. */
export function urlPolicyFor(config: Pick<Config, 'env'>, options: WebhookOptions = {}): WebhookUrlPolicy {
  return new WebhookUrlPolicy({
    allowPrivateNetworks: options.allowPrivateNetworks ?? config.env !== 'production',
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
}

/** Wires the webhooks domain: URL policy, outbox fan-out, and the delivery worker. */
export function createWebhookRuntime(deps: {
  config: Pick<Config, 'env'>;
  store: Store;
  secrets: SecretBox;
  log: Logger;
  now: () => number;
  options?: WebhookOptions;
}): WebhookRuntime {
  const options = deps.options ?? {};
  const policy = urlPolicyFor(deps.config, options);
  const worker = new DeliveryWorker({
    db: deps.store.db,
    secrets: deps.secrets,
    dialect: deps.store.dialect,
    log: deps.log.child({ module: 'webhooks' }),
    policy,
    now: deps.now,
    ...options.tuning,
  });
  const fanOut = webhookFanOut({
    db: deps.store.db,
    log: deps.log.child({ module: 'webhooks' }),
    now: deps.now,
    onQueued: () => worker.wake(),
  });
  return { policy, worker, fanOut, deliver: options.deliver ?? true };
}
