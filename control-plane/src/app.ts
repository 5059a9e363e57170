import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { Config } from './config/index.js';
import { Metrics, healthRoutes } from './health/index.js';
import {
  securityHeaders,
  correlationId,
  errorHandler,
  notFoundOrMethodNotAllowed,
  mountRoutes,
  type Authenticator,
  RateLimiter,
  type IpLimiter,
  requestLog,
  type RouteDef,
} from './http/index.js';
import type { Logger } from './logging/logger.js';
import type { Mailer } from './mail/index.js';
import { openApiRoutes } from './openapi/index.js';
import { outboxBacklog } from './outbox/index.js';
import type { SecretBox, Store } from './store/index.js';
import { advisoryRoutes } from './advisories/index.js';
import { complianceRoutes } from './compliance/index.js';
import { type AidcRouteDeps, aidcRoutes } from './aidc/index.js';
import type { Broker } from './broker/index.js';
import { type DeviceService, deviceRoutes } from './devices/index.js';
import { type TokenService, accessTokenAuthenticator, oauthRoutes } from './oauth/index.js';
import { type Keyring, signingRoutes } from './signing/index.js';
import { ingestRoutes } from './ingest/index.js';
import { productRoutes } from './products/index.js';
import {
  type CredentialSigner,
  type GenerationWorker,
  localSigner,
  passportRoutes,
} from './passports/index.js';
import { PublicAnswerCache, publicCors, publicFastPath, publicRoutes } from './public/index.js';
import { carrierRoutes } from './carriers/index.js';
import { epcisRoutes } from './epcis/index.js';
import { schemaRegistry, schemaRoutes } from './schemas/index.js';
import { apiKeyAuthenticator, apiKeyRoutes } from './tenants/index.js';
import { type TransparencyLog, transparencyRoutes } from './transparency/index.js';
import { webRouter } from './web/index.js';
import { type WebhookRuntime, urlPolicyFor, webhookRoutes } from './webhooks/index.js';

export const API_VERSION = '2.0.0';

export interface AppDeps {
  config: Config;
  store: Store;
  log: Logger;
  now: () => number;
  isShuttingDown: () => boolean;
  services: AppServices;
}

/** Long-lived services the composition root creates before the HTTP surface. */
export interface AppServices {
  keyring: Keyring;
  /** Seals and opens the secrets kept in the store (SECRETS_KEY). */
  secrets: SecretBox;
  devices: DeviceService;
  tokens: TokenService;
  broker: Broker;
  /** Webhook URL policy and delivery worker; without it, routes use the policy of `config.env`. */
  webhooks?: WebhookRuntime;
  /** The passport generation worker (woken when a request is queued) and the credential signer. */
  passports?: { worker: GenerationWorker; signer: CredentialSigner };
  /** Orchestrated print jobs. */
  aidc?: AidcRouteDeps;
  /** The transparency log of seal receipts, read by the label proof and the log's public routes. */
  transparency: TransparencyLog;
  /** Asks the outbox dispatcher for a pass now (after a write that may have queued side effects). */
  wakeOutbox?: () => void;
  /** Sends the few emails there are (sign-up). */
  mailer: Mailer;
}

export interface BuiltApp {
  app: Express;
  routes: readonly RouteDef[];
  metrics: Metrics;
  /** The API's rate limiter (shared with other replicas by the composition root on PostgreSQL). */
  limiter: RateLimiter;
  /** The budgets per client IP of the operations without a credential (shared the same way). */
  ipLimiter: IpLimiter;
  /** Answers of the resolver and the public passport kept for a moment (emptied on every write). */
  publicCache: PublicAnswerCache;
  /** The server's handler: the resolver and the public passport read before Express (public/fast-path.ts). */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/** Wires the HTTP surface: global middleware, every domain's operations, the web pages, 404/405, errors. */
export function buildApp(deps: AppDeps): BuiltApp {
  const { config, store, log, now } = deps;
  const metrics = new Metrics();
  const { keyring, devices, tokens, broker } = deps.services;
  // An access token first: it is told by its shape (a JWS's three parts) and its signature without a read,
  // so a device's every call no longer looks its token up as an API key first; a credential that is not a
  // valid token (every `dpp_sk_` key, or a seed secret shaped like one) goes on to the API keys.
  const authenticators: Authenticator[] = [
    accessTokenAuthenticator({ keyring, db: store.db, issuer: config.publicBaseUrl }),
    apiKeyAuthenticator(store.db, now),
  ];

  // The broker's side of a revocation: a failure leaves a login the periodic sweep removes (server.ts).
  const revokeOnBroker = (deviceId: string) =>
    broker
      .revokeDevice(deviceId)
      .catch((err: unknown) =>
        log.warn({ err, deviceId }, 'the revoked device still has a broker login; the next sweep removes it'),
      );

  const publicCache = new PublicAnswerCache({ maxAgeMs: config.publicCacheMaxAgeMs, now });
  const publicAnswers = { db: store.db, publicBaseUrl: config.publicBaseUrl, cache: publicCache };
  const routes: RouteDef[] = [];
  routes.push(
    ...healthRoutes({
      metrics,
      ping: store.ping,
      pingTimeoutMs: config.readyTimeoutMs,
      isShuttingDown: deps.isShuttingDown,
      beforeScrape: async () => {
        metrics.outboxBacklog.set(await outboxBacklog(store.db));
        metrics.readPublicAnswers(publicCache.answered);
        const checkpoints = store.checkpoints?.();
        if (checkpoints) metrics.readCheckpoints(checkpoints);
      },
    }),
    ...openApiRoutes({ routes: () => routes, publicBaseUrl: config.publicBaseUrl, version: API_VERSION }),
    ...apiKeyRoutes({ db: store.db }),
    ...schemaRoutes({ registry: schemaRegistry, now }),
    ...productRoutes({ db: store.db, registry: schemaRegistry, env: config.env, now }),
    ...ingestRoutes({ db: store.db, registry: schemaRegistry, now }),
    ...carrierRoutes({
      db: store.db,
      publicBaseUrl: config.publicBaseUrl,
      idempotencyTtlHours: config.idempotencyTtlHours,
      now,
    }),
    ...epcisRoutes({ db: store.db, now }),
    ...signingRoutes({ keyring }),
    ...transparencyRoutes({
      db: store.db,
      log: deps.services.transparency,
      devices,
      keyring,
      issuer: config.publicBaseUrl,
      now,
    }),
    ...oauthRoutes({ tokens }),
    ...deviceRoutes({
      devices,
      issuer: config.publicBaseUrl,
      tokenEndpoint: tokens.tokenEndpoint,
      broker,
      keyring,
      now,
      onRevoked: revokeOnBroker,
      onKeyRotated: (device) =>
        broker
          .admitDevice(device)
          .then(() => undefined)
          .catch((err: unknown) =>
            log.warn(
              { err, deviceId: device.deviceId },
              'the broker still has the login of the old key; the device replaces it when it asks for its login',
            ),
          ),
    }),
    ...webhookRoutes({
      db: store.db,
      secrets: deps.services.secrets,
      policy: deps.services.webhooks?.policy ?? urlPolicyFor(config),
      now,
      onDeliveryQueued: () => deps.services.webhooks?.worker.wake(),
    }),
    ...passportRoutes({
      db: store.db,
      secrets: deps.services.secrets,
      registry: schemaRegistry,
      env: config.env,
      publicBaseUrl: config.publicBaseUrl,
      registryConnectors: config.registryConnectors,
      euRegistryUrl: config.euRegistryUrl,
      signer: deps.services.passports?.signer ?? localSigner,
      now,
      onGenerationQueued: () => deps.services.passports?.worker.wake(),
    }),
    ...publicRoutes({ ...publicAnswers, registry: schemaRegistry }),
    ...advisoryRoutes({ db: store.db, publicBaseUrl: config.publicBaseUrl, now }),
    ...complianceRoutes({ db: store.db, now }),
    ...(deps.services.aidc ? aidcRoutes(deps.services.aidc) : []),
  );

  const app = express();
  app.disable('x-powered-by');
  // API answers are per-credential and mostly uncacheable; hashing every body for an ETag costs ~10%.
  app.set('etag', false);
  // The client of a request: X-Forwarded-For only from the proxies TRUST_PROXY names (loopback by default).
  app.set('trust proxy', config.trustProxy);
  // What every request passes first (public/fast-path.ts adds the same to the answers it sends).
  app.use(securityHeaders({ production: config.env === 'production' }));
  app.use(correlationId());
  app.use(requestLog(log));
  app.use(metrics.middleware());
  app.use(publicCors());
  const ipLimiter: IpLimiter = new RateLimiter(config.ipRateLimits, now);
  const limiter = new RateLimiter(config.rateLimits, now);
  const api = mountRoutes(routes, {
    db: store.db,
    secrets: deps.services.secrets,
    authenticators,
    limiter,
    ipLimiter,
    idempotencyTtlHours: config.idempotencyTtlHours,
    now,
    // A write may change public answers: this replica throws them away at once (and tells the others).
    afterWrite: (effect) => {
      publicCache.invalidate(effect);
      deps.services.wakeOutbox?.();
    },
  });
  // The API before the pages (whose paths are none of the API's): a router that matches nothing hands the
  // request on in a later turn of the event loop (setImmediate), so every API call passed through the
  // pages' router waited for everything else that was ready, about 140 ms (p50) for a claim on the
  // benchmark's saturated floor. A page now pays that turn instead (one: the API's operations are dispatched
  // to one router of those that can match, http/mount.ts).
  app.use(api);
  app.use(
    webRouter({
      store,
      config,
      log,
      ipLimiter,
      mailer: deps.services.mailer,
      onDeviceRevoked: revokeOnBroker,
    }),
  );
  app.use(notFoundOrMethodNotAllowed(routes));
  app.use(errorHandler());
  const handler = publicFastPath({
    app,
    answers: publicAnswers,
    ipLimiter,
    metrics,
    log,
    production: config.env === 'production',
  });
  return { app, routes, metrics, limiter, ipLimiter, publicCache, handler };
}
