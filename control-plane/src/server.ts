import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import v8 from 'node:v8';
import {
  type AidcSettings,
  DEFAULT_LABEL_TEMPLATE,
  JobService,
  type PrintLoopPort,
  startReaper,
} from './aidc/index.js';
import { buildApp, type AppServices, type BuiltApp } from './app.js';
import { shippedPacks } from './compliance/index.js';
import { carriersPrintLoop } from './carriers/index.js';
import {
  type Broker,
  EmbeddedBroker,
  ExternalBroker,
  WORK_NOTICE_TOPIC,
  noBroker,
  workNoticeHandler,
} from './broker/index.js';
import { DeviceService } from './devices/index.js';
import { TokenService, principalFromAccessToken } from './oauth/index.js';
import { Keyring } from './signing/index.js';
import type { Config } from './config/index.js';
import { purgeEndedWork } from './housekeeping/retention.js';
import { answerParserErrors, RateShare } from './http/index.js';
import { IngestWorker } from './ingest/index.js';
import { createLogger, type Logger } from './logging/logger.js';
import { type Mailer, logMailer } from './mail/index.js';
import { OutboxDispatcher } from './outbox/index.js';
import { type CredentialSigner, GenerationWorker, isReadyToPrint, localSigner } from './passports/index.js';
import { CacheInvalidation } from './public/index.js';
import { schemaRegistry } from './schemas/index.js';
import { TransparencyLog, startSequencer } from './transparency/index.js';
import type { PollingLoop } from './workers/index.js';
import {
  SecretBox,
  openStore,
  purgeExpiredIdempotencyKeys,
  sealStoredSecrets,
  type Store,
  type StoreOptions,
} from './store/index.js';
import { applySeed, purgeExpiredSessions, readSeedFile } from './tenants/index.js';
import { type DeliveryWorker, type WebhookOptions, createWebhookRuntime } from './webhooks/index.js';

export interface ControlPlane {
  /** Base URL the server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  port: number;
  /** The node:http server it answers on (its `connection` and `request` events, for whoever measures them). */
  server: Server;
  store: Store;
  dispatcher: OutboxDispatcher;
  built: BuiltApp;
  services: AppServices;
  /** The webhook delivery worker (started unless `webhooks.deliver` was false). */
  webhooks: DeliveryWorker;
  /** The ingest worker (started unless `ingest.start` was false). */
  ingest: IngestWorker;
  /** The passport generation worker (started unless `passports.start` was false). */
  generation: GenerationWorker;
  /** The transparency log's sequencer loop (tests stop it to run the log's passes themselves). */
  sequencer: PollingLoop;
  log: Logger;
  /** Graceful: stops taking requests, finishes in-flight ones, stops workers, closes the store. */
  close(): Promise<void>;
}

export interface StartOptions {
  log?: Logger;
  now?: () => number;
  /** Overrides of how the store is opened (tests use their own PostgreSQL schema). */
  store?: Partial<StoreOptions>;
  /** Webhook delivery tuning, URL policy, and whether the delivery worker starts. */
  webhooks?: WebhookOptions;
  /** Whether the outbox dispatcher starts (default true); tests stop between commit and dispatch. */
  outbox?: { start?: boolean };
  /** Whether the ingest worker starts (default true), and its tuning; tests drive it by hand. */
  ingest?: { start?: boolean; rowsPerCommit?: number; leaseMs?: number; pollMs?: number };
  /**
   * Whether the passport generation worker starts (default true), and the credential signer (the local
   * did:key signer by default; tests hand in faulty ones).
   */
  passports?: { start?: boolean; signer?: CredentialSigner; pollMs?: number };
  /** Where email goes (a log line per message by default: there is no mail system yet). */
  mailer?: Mailer;
}

/** Starts the whole control plane from a configuration. The composition root of the service. */
export async function startControlPlane(config: Config, options: StartOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? createLogger({ level: config.logLevel });
  // The live heap is tens of MB, but under a print line's allocation rate V8's own heuristics let the old
  // generation grow to about four times that before a full collection: RSS rises by ~100 MB in the first
  // thousands of jobs (docs/benchmarks.md, the memory soak). A tighter factor keeps it near the live size.
  if (config.heapGrowthPercent > 0)
    v8.setFlagsFromString(`--heap-growing-percent=${config.heapGrowthPercent}`);
  shippedPacks(); // a malformed regulation pack stops the start here, with one line naming it
  const now = options.now ?? Date.now;
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    pgPoolSize: config.databasePoolSize,
    sqliteFile: path.join(config.dataDir, 'control-plane.sqlite'),
    ...options.store,
  });
  if (config.seedFile) await applySeed(store.db, await readSeedFile(config.seedFile));

  const secrets = SecretBox.of(config.secretsKey, config.secretsKeyPrevious);
  const sealed = await sealStoredSecrets(store.db, secrets);
  if (sealed > 0) log.info({ sealed }, 'sealed stored secrets under the current SECRETS_KEY');
  if (!secrets.sealing && config.env === 'production')
    log.warn('SECRETS_KEY is not set: webhook secrets and signing keys are stored unencrypted');
  const keyring = new Keyring({ db: store.db, secrets, now, refreshMs: config.signingKeysRefreshMs });
  await keyring.init();
  keyring.start();
  const devices = new DeviceService(store.db, now);
  const tokens = new TokenService({
    db: store.db,
    keyring,
    devices,
    issuer: config.publicBaseUrl,
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    now,
  });
  const broker = await startBroker(config, log, (token) =>
    principalFromAccessToken(token, { keyring, db: store.db, issuer: config.publicBaseUrl }),
  ).catch(async (err: unknown) => {
    // The embedded broker's port taken, or an external broker refusing us: nothing else has started yet.
    keyring.stop();
    await store.close();
    throw err;
  });
  const webhooks = createWebhookRuntime({ config, store, secrets, log, now, options: options.webhooks });
  const passportSigner = options.passports?.signer ?? localSigner;
  const generation = new GenerationWorker({
    db: store.db,
    secrets,
    registry: schemaRegistry,
    publicBaseUrl: config.publicBaseUrl,
    log: log.child({ module: 'passports' }),
    now,
    signer: passportSigner,
    ...(options.passports?.pollMs ? { pollMs: options.passports.pollMs } : {}),
  });
  const dispatcher = new OutboxDispatcher({
    db: store.db,
    dialect: store.dialect,
    log: log.child({ module: 'outbox' }),
  });
  const transparency = new TransparencyLog({
    db: store.db,
    keyring,
    issuer: config.publicBaseUrl,
    now,
    maxHeadAgeMs: config.transparencyLog.treeHeadMaxAgeMs,
    log: log.child({ module: 'transparency-log' }),
  });
  const sequencer = startSequencer(transparency, {
    log: log.child({ module: 'transparency-log' }),
    intervalMs: config.transparencyLog.sequenceIntervalMs,
    gapMs: config.transparencyLog.sequenceGapMs,
  });
  const printLoop: PrintLoopPort = {
    ...carriersPrintLoop({ publicBaseUrl: config.publicBaseUrl }),
    isReadyToPrint,
  };
  const aidcSettings: AidcSettings = { ...config.aidc, defaultTemplate: DEFAULT_LABEL_TEMPLATE };
  const services: AppServices = {
    keyring,
    secrets,
    devices,
    tokens,
    broker,
    webhooks,
    passports: { worker: generation, signer: passportSigner },
    aidc: {
      jobs: new JobService(store.db, printLoop, aidcSettings, now),
      claim: {
        db: store.db,
        dialect: store.dialect,
        keyring,
        issuer: config.publicBaseUrl,
        settings: aidcSettings,
        now,
      },
      result: {
        db: store.db,
        port: printLoop,
        keyring,
        issuer: config.publicBaseUrl,
        idempotencyTtlHours: config.idempotencyTtlHours,
        now,
        onSealed: () => sequencer.wake(),
      },
    },
    transparency,
    wakeOutbox: () => dispatcher.wakeIfWritten(),
    mailer: options.mailer ?? logMailer(log),
  };

  let shuttingDown = false;
  const built = buildApp({ config, store, log, now, isShuttingDown: () => shuttingDown, services });
  // On PostgreSQL there may be other replicas: they share rate-limit counts through the database.
  const rateShares =
    store.dialect === 'postgres'
      ? [built.limiter, built.ipLimiter].map(
          (limiter) => new RateShare(store.db, limiter, log.child({ module: 'rate-limit' })),
        )
      : [];
  for (const share of rateShares) share.start();
  // On PostgreSQL, a write through any replica empties every replica's public answer cache at once.
  const invalidation =
    store.dialect === 'postgres' && config.databaseUrl && built.publicCache.enabled
      ? new CacheInvalidation({
          databaseUrl: config.databaseUrl,
          schema: options.store?.pgSchema ?? 'public',
          db: store.db,
          cache: built.publicCache,
          log: log.child({ module: 'public-cache' }),
        })
      : null;
  await invalidation?.start();
  dispatcher.register(WORK_NOTICE_TOPIC, workNoticeHandler(store.db, broker));
  dispatcher.register('event', webhooks.fanOut);
  if (options.outbox?.start !== false) dispatcher.start();
  if (webhooks.deliver) webhooks.worker.start();
  const ingest = new IngestWorker({
    db: store.db,
    registry: schemaRegistry,
    env: config.env,
    log: log.child({ module: 'ingest' }),
    now,
    ...(options.ingest?.rowsPerCommit ? { rowsPerCommit: options.ingest.rowsPerCommit } : {}),
    ...(options.ingest?.leaseMs ? { leaseMs: options.ingest.leaseMs } : {}),
    ...(options.ingest?.pollMs ? { pollMs: options.ingest.pollMs } : {}),
  });
  if (options.ingest?.start !== false) ingest.start();
  if (options.passports?.start !== false) generation.start();
  const reaper = startReaper(
    { db: store.db, port: printLoop, log: log.child({ module: 'aidc-reaper' }), now },
    config.aidc.reaperIntervalMs,
  );
  const housekeeping = setInterval(() => {
    purgeExpiredIdempotencyKeys(store.db, new Date(now()).toISOString()).catch((err) =>
      log.warn({ err }, 'idempotency purge failed'),
    );
    tokens.purgeAssertions().catch((err) => log.warn({ err }, 'assertion purge failed'));
    purgeExpiredSessions(store.db).catch((err) => log.warn({ err }, 'session purge failed'));
    const olderThan = new Date(now() - config.retentionDays * 86_400_000).toISOString();
    purgeEndedWork(store.db, olderThan).then(
      (purged) => log.info({ purged, olderThan }, 'retention purge done'),
      (err: unknown) => log.warn({ err }, 'retention purge failed'),
    );
  }, 3_600_000);
  housekeeping.unref();
  // Broker logins of devices that are no longer active (a revocation whose broker call failed) go within a minute.
  const sweepBroker = () => {
    broker
      .sweepDevices((ids) => devices.activeAmong(ids))
      .then(
        (removed) => removed > 0 && log.info({ removed }, 'removed broker logins of inactive devices'),
        (err: unknown) => log.warn({ err }, 'broker login sweep failed'),
      );
  };
  sweepBroker();
  const brokerSweep = setInterval(sweepBroker, 60_000);
  brokerSweep.unref();

  // Resolver and public passport answers go out before Express (public/fast-path.ts).
  const server: Server = createServer(built.handler);
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      shuttingDown = true;
      clearInterval(housekeeping);
      clearInterval(brokerSweep);
      keyring.stop();
      // SHUTDOWN_GRACE_MS bounds the whole stop. In-flight requests get most of it; when one is stuck (a
      // slow client, a query waiting on a lock) its socket is closed, and whatever still holds the store at
      // the deadline is cut off by closing the store at once.
      const deadline = Date.now() + config.shutdownGraceMs;
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const force = setTimeout(
        () => server.closeAllConnections(),
        Math.max(0, Math.floor(config.shutdownGraceMs * 0.8)),
      );
      const stopped = (async () => {
        await drained;
        clearTimeout(force);
        await ingest.stop();
        await generation.stop();
        await reaper.stop();
        await sequencer.stop();
        await dispatcher.stop();
        await Promise.all(rateShares.map((s) => s.stop()));
        await invalidation?.stop();
        await webhooks.worker.stop();
        await broker.close();
        await store.close();
      })();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()));
      });
      const outcome = await Promise.race([stopped.then(() => 'stopped' as const), late]);
      clearTimeout(timer);
      if (outcome === 'late') {
        clearTimeout(force);
        server.closeAllConnections();
        await store.forceClose();
        stopped.catch(() => undefined); // what was stuck fails now that the store is closed
        log.warn({ graceMs: config.shutdownGraceMs }, 'shutdown grace spent: closed the store at once');
      }
      log.info('control plane stopped');
    })());

  // A port already taken (EADDRINUSE) or not allowed stops the start: what started above stops with it, so a
  // caller that retries on another port does not leave workers running on the same store.
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await close();
    throw err;
  }
  server.keepAliveTimeout = 5_000;
  answerParserErrors(server);
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${port}`;
  log.info({ url, dialect: store.dialect, env: config.env }, 'control plane listening');

  return {
    url,
    port,
    server,
    store,
    dispatcher,
    built,
    services,
    webhooks: webhooks.worker,
    ingest,
    generation,
    sequencer,
    log,
    close,
  };
}

/** The embedded aedes broker on MQTT_PORT, an external one at MQTT_URL, or none when MQTT_PORT=0. */
async function startBroker(
  config: Config,
  log: Logger,
  authenticate: (token: string) => ReturnType<typeof principalFromAccessToken>,
): Promise<Broker> {
  if (config.mqttUrl)
    return ExternalBroker.connect(config.mqttUrl, log.child({ module: 'mqtt' }), {
      deviceAuth: config.mqttDeviceAuth,
      deviceSecret: config.mqttDeviceSecret,
    });
  if (config.mqttPort === 0) return noBroker;
  return EmbeddedBroker.start({
    port: config.mqttPort,
    host: config.host,
    publicHost: new URL(config.publicBaseUrl).hostname,
    authenticate,
    log: log.child({ module: 'mqtt' }),
  });
}
