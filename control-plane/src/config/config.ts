import { isIP } from 'node:net';
import path from 'node:path';

/** Tiers a tenant can be on; each has its own rate budget. */
export const TIERS = ['free', 'mid_market', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export type Environment = 'development' | 'test' | 'production';

/** A fixed-window request budget: `limit` requests per `windowSeconds`. */
/**
 * Per-client-IP budgets of the routes without a credential: `public` (public passport, resolver, pages),
 * `credentials` (OAuth token, device enrollment, sign-in, sign-up) and `failures` (failed sign-ins and
 * enrollments: once spent, even a right password waits for the window to end).
 */
export const IP_CLASSES = ['public', 'credentials', 'failures', 'advisories'] as const;
export type IpClass = (typeof IP_CLASSES)[number];

export interface RateBudget {
  limit: number;
  windowSeconds: number;
}

export interface Config {
  env: Environment;
  port: number;
  host: string;
  dataDir: string;
  /** `postgres://...` selects PostgreSQL; undefined selects SQLite in `dataDir`. */
  databaseUrl: string | undefined;
  /**
   * DATABASE_POOL_SIZE: connections this replica keeps to PostgreSQL (claims go first for a free one). A
   * replica sharing its database's cores waits less with fewer (docs/benchmarks.md, "The pool's size").
   */
  databasePoolSize: number;
  /** Port of the embedded MQTT broker; 0 turns it off. */
  mqttPort: number;
  /** External broker to use instead of the embedded one. */
  mqttUrl: string | undefined;
  /**
   * MQTT_DEVICE_AUTH, with MQTT_URL: `dynamic-security` (the control plane administers each device's login and
   * ACL on a Mosquitto with its dynamic-security plugin) or `access-token` (the broker checks access tokens
   * itself, e.g. EMQX's JWT authenticator). The embedded broker always checks access tokens.
   */
  mqttDeviceAuth: 'dynamic-security' | 'access-token';
  /** MQTT_DEVICE_SECRET: what devices' broker passwords are derived from (dynamic-security). */
  mqttDeviceSecret: string | undefined;
  seedFile: string | undefined;
  publicBaseUrl: string;
  rateLimits: Record<Tier, RateBudget>;
  /** IP_RATE_LIMITS: budgets per client IP of the routes without a credential. */
  ipRateLimits: Record<IpClass, RateBudget>;
  /**
   * TRUST_PROXY: the proxies whose X-Forwarded-For names the client (Express's `trust proxy`: addresses,
   * CIDRs, `loopback`, `linklocal`, `uniquelocal`; loopback when unset); false (`none`) trusts none, so the
   * client is the socket's peer.
   */
  trustProxy: string[] | false;
  /**
   * PUBLIC_CACHE_MAX_AGE_MS: how long a replica may answer a resolver redirect or a public passport read
   * from memory (public/cache.ts); at most 1,000 so every replica shows a change within a second; 0 turns
   * the cache and the fast path off.
   */
  publicCacheMaxAgeMs: number;
  idempotencyTtlHours: number;
  /** Days the control plane keeps work that has ended (dispatched outbox rows, ended webhook deliveries, finished ingest jobs). */
  retentionDays: number;
  /** Key sealing secrets stored in the database (store/secrets.ts); none: stored as they are. */
  secretsKey: Buffer | undefined;
  /** The key before a rotation: opens what it sealed; the start re-seals that under `secretsKey`. */
  secretsKeyPrevious: Buffer | undefined;
  logLevel: string;
  /**
   * HEAP_GROWTH_PERCENT: how far V8 lets the old generation grow past what survived its last full
   * collection before it collects again (V8's --heap-growing-percent); 0 leaves it to V8's heuristics. The default,
   * 50, keeps RSS flat over a long print floor while full collections stay rare (docs/benchmarks.md, round 21).
   */
  heapGrowthPercent: number;
  /** How long shutdown may take in all: in-flight requests get this long, then sockets and the store close. */
  shutdownGraceMs: number;
  /** /readyz answers 503 when the store does not answer a ping within this bound. */
  readyTimeoutMs: number;
  /** How often each replica reads the signing keys again (another replica may have rotated). */
  signingKeysRefreshMs: number;
  /** Lifetime of OAuth access tokens (devices and API clients). */
  accessTokenTtlSeconds: number;
  /** Print jobs: lease per claim or heartbeat, retry budget, and how often the reaper runs. */
  aidc: { leaseSeconds: number; maxAttempts: number; reaperIntervalMs: number };
  /**
   * The transparency log of seal receipts: how often its sequencer looks, the least time between two of its
   * passes that a seal asks for, and the oldest a tree head gets.
   */
  transparencyLog: { sequenceIntervalMs: number; sequenceGapMs: number; treeHeadMaxAgeMs: number };
  /**
   * External passport registries a passport can be broadcast to (POST /passports/{id}/publish), each an
   * HTTP endpoint that receives the passport JSON. Empty means none: the broadcast answers 503
   * REGISTRY_UNAVAILABLE (always so for sandbox tenants).
   */
  registryConnectors: Partial<Record<RegistryName, string>>;
  /**
   * EU_REGISTRY_URL: the connector of the EU digital product passport registry (ESPR Art. 13) that registerDPP
   * POSTs a passport's registration record to. None: registerDPP answers 503 REGISTRY_UNAVAILABLE (always so for
   * sandbox tenants).
   */
  euRegistryUrl: string | undefined;
}

/** Registries a passport can be broadcast to (api-v2.md, POST /passports/{id}/publish). */
export const REGISTRY_NAMES = ['CATENA_X', 'GS1', 'EBSI'] as const;
export type RegistryName = (typeof REGISTRY_NAMES)[number];

/** A configuration value is wrong; `message` is one line naming the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

export const DEFAULT_IP_RATE_LIMITS: Record<IpClass, RateBudget> = {
  public: { limit: 1200, windowSeconds: 60 },
  credentials: { limit: 120, windowSeconds: 60 },
  failures: { limit: 10, windowSeconds: 900 },
  advisories: { limit: 60, windowSeconds: 60 },
};

export const DEFAULT_RATE_LIMITS: Record<Tier, RateBudget> = {
  free: { limit: 600, windowSeconds: 60 },
  mid_market: { limit: 6000, windowSeconds: 60 },
  enterprise: { limit: 60000, windowSeconds: 60 },
};

type Env = Readonly<Record<string, string | undefined>>;

/** A whole number from `min` to `max`, or `fallback` when unset; refused with "must be <what>". */
function readWhole(env: Env, name: string, fallback: number, min: number, max: number, what: string): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new ConfigError(name, `must be ${what}, got "${raw}"`);
  return Number(raw);
}

const readPort = (env: Env, name: string, fallback: number) =>
  readWhole(env, name, fallback, 0, 65535, 'a port number from 0 to 65535');

const readPositiveInt = (env: Env, name: string, fallback: number) =>
  readWhole(env, name, fallback, 1, Infinity, 'a positive integer');

const readPercent = (env: Env, name: string, fallback: number) =>
  readWhole(env, name, fallback, 0, 1000, 'a whole percentage from 0 to 1000');

const readMilliseconds = (env: Env, name: string, fallback: number, max: number) =>
  readWhole(env, name, fallback, 0, max, `a whole number of milliseconds from 0 to ${max}`);

/** A 32-byte key given as 64 hex digits or as base64 (standard or URL-safe). */
function readKey(env: Env, name: string): Buffer | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const key = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw, 'base64') // either alphabet
      : null;
  if (!key || key.length !== 32)
    throw new ConfigError(
      name,
      'must be 32 bytes as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)',
    );
  return key;
}

function readUrl(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${url.protocol}"`);
  }
  return raw;
}

/**
 * Parses a list of budgets, e.g. `free=600/60,mid_market=6000/60` (requests per window in seconds), for the
 * names given; names not listed keep their defaults.
 */
function readBudgets<N extends string>(
  env: Env,
  name: string,
  names: readonly N[],
  defaults: Record<N, RateBudget>,
): Record<N, RateBudget> {
  const raw = env[name];
  const out = { ...defaults };
  if (raw === undefined || raw.trim() === '') return out;
  for (const part of raw.split(',')) {
    const m = /^\s*([a-z_]+)\s*=\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(part);
    if (!m) throw new ConfigError(name, `expected name=limit/windowSeconds, got "${part.trim()}"`);
    const [, key, limit, window] = m as unknown as [string, string, string, string];
    if (!(names as readonly string[]).includes(key)) {
      throw new ConfigError(name, `unknown name "${key}" (names: ${names.join(', ')})`);
    }
    if (Number(limit) < 1 || Number(window) < 1) {
      throw new ConfigError(name, `limit and window must be at least 1 in "${part.trim()}"`);
    }
    out[key as N] = { limit: Number(limit), windowSeconds: Number(window) };
  }
  return out;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Parses `TRUST_PROXY`: a comma-separated list of addresses, CIDRs or Express's names; `none` trusts no proxy.
 * Unset, a proxy on the same host (loopback) is trusted.
 */
function readTrustProxy(env: Env): string[] | false {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw) return ['loopback'];
  if (raw === 'none') return false;
  const items = raw.split(',').map((s) => s.trim());
  for (const item of items) {
    const [address, bits, extra] = item.split('/');
    const family = isIP(address ?? '');
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!(PROXY_NAMES.has(item) || (family !== 0 && bitsOk && extra === undefined))) {
      throw new ConfigError(
        'TRUST_PROXY',
        `expected addresses, CIDRs, loopback, linklocal or uniquelocal, got "${item}"`,
      );
    }
  }
  return items;
}

/**
 * Parses `REGISTRY_CONNECTORS`, e.g. `GS1=https://registry.example/gs1,EBSI=https://ebsi.example/dpp`:
 * registry names (upper case, one of REGISTRY_NAMES) and the URL each broadcast is POSTed to. Production
 * only accepts https endpoints.
 */
function readRegistryConnectors(env: Env, production: boolean): Partial<Record<RegistryName, string>> {
  const raw = env.REGISTRY_CONNECTORS;
  const out: Partial<Record<RegistryName, string>> = {};
  if (raw === undefined || raw.trim() === '') return out;
  for (const part of raw.split(',')) {
    const m = /^\s*([A-Za-z0-9_]+)\s*=\s*(\S+)\s*$/.exec(part);
    if (!m) throw new ConfigError('REGISTRY_CONNECTORS', `expected NAME=url, got "${part.trim()}"`);
    const [, name, url] = m as unknown as [string, string, string];
    if (!(REGISTRY_NAMES as readonly string[]).includes(name)) {
      throw new ConfigError(
        'REGISTRY_CONNECTORS',
        `unknown registry "${name}" (registries, upper case: ${REGISTRY_NAMES.join(', ')})`,
      );
    }
    if (out[name as RegistryName] !== undefined) {
      throw new ConfigError('REGISTRY_CONNECTORS', `registry ${name} is configured twice`);
    }
    const checked = readUrl(
      { REGISTRY_CONNECTORS: url },
      'REGISTRY_CONNECTORS',
      production ? ['https:'] : ['http:', 'https:'],
    );
    out[name as RegistryName] = checked!;
  }
  return out;
}

/**
 * Reads the configuration once: typed defaults, then the environment, then validation.
 * Throws `ConfigError` naming the first bad variable.
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const envName = env.DPP_ENV ?? 'development';
  if (envName !== 'development' && envName !== 'test' && envName !== 'production') {
    throw new ConfigError('DPP_ENV', `must be development, test or production, got "${envName}"`);
  }
  const port = readPort(env, 'PORT', 8080);
  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const mqttUrl = readUrl(env, 'MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:', 'tcp:']);
  const publicBaseUrl = readUrl(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const seedFile = env.DPP_SEED_FILE || undefined;
  if (seedFile && envName === 'production') {
    throw new ConfigError(
      'DPP_SEED_FILE',
      'is for development and test only; production refuses to start with it',
    );
  }
  const secretsKey = readKey(env, 'SECRETS_KEY');
  const secretsKeyPrevious = readKey(env, 'SECRETS_KEY_PREVIOUS');
  if (secretsKeyPrevious && !secretsKey)
    throw new ConfigError('SECRETS_KEY_PREVIOUS', 'needs SECRETS_KEY, the key that replaces it');
  const mqttDeviceAuth = env.MQTT_DEVICE_AUTH || 'access-token';
  if (mqttDeviceAuth !== 'access-token' && mqttDeviceAuth !== 'dynamic-security')
    throw new ConfigError(
      'MQTT_DEVICE_AUTH',
      `must be access-token or dynamic-security, got "${mqttDeviceAuth}"`,
    );
  if (mqttDeviceAuth === 'dynamic-security' && !mqttUrl)
    throw new ConfigError(
      'MQTT_DEVICE_AUTH',
      'dynamic-security administers an external broker: set MQTT_URL',
    );
  const mqttDeviceSecret = env.MQTT_DEVICE_SECRET || undefined;
  if (mqttDeviceAuth === 'dynamic-security' && (!mqttDeviceSecret || mqttDeviceSecret.length < 32))
    throw new ConfigError(
      'MQTT_DEVICE_SECRET',
      'needs at least 32 characters with MQTT_DEVICE_AUTH=dynamic-security (e.g. `openssl rand -base64 32`)',
    );
  const logLevel = env.LOG_LEVEL ?? (envName === 'test' ? 'warn' : 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError(
      'LOG_LEVEL',
      `must be one of fatal, error, warn, info, debug, trace, silent, got "${logLevel}"`,
    );
  }
  return {
    env: envName,
    port,
    host: env.HOST || '0.0.0.0',
    dataDir: path.resolve(cwd, env.DATA_DIR || './data'),
    databaseUrl,
    // Two at least: a transaction and the claims that go first while it holds its connection.
    databasePoolSize: readWhole(env, 'DATABASE_POOL_SIZE', 10, 2, 1000, 'a whole number from 2 to 1000'),
    mqttPort: readPort(env, 'MQTT_PORT', 1883),
    mqttUrl,
    mqttDeviceAuth,
    mqttDeviceSecret,
    seedFile: seedFile ? path.resolve(cwd, seedFile) : undefined,
    publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''),
    rateLimits: readBudgets(env, 'RATE_LIMITS', TIERS, DEFAULT_RATE_LIMITS),
    ipRateLimits: readBudgets(env, 'IP_RATE_LIMITS', IP_CLASSES, DEFAULT_IP_RATE_LIMITS),
    trustProxy: readTrustProxy(env),
    publicCacheMaxAgeMs: readMilliseconds(env, 'PUBLIC_CACHE_MAX_AGE_MS', 500, 1_000),
    idempotencyTtlHours: readPositiveInt(env, 'IDEMPOTENCY_TTL_HOURS', 24),
    retentionDays: readPositiveInt(env, 'RETENTION_DAYS', 30),
    secretsKey,
    secretsKeyPrevious,
    logLevel,
    heapGrowthPercent: readPercent(env, 'HEAP_GROWTH_PERCENT', 50),
    shutdownGraceMs: readPositiveInt(env, 'SHUTDOWN_GRACE_MS', 10_000),
    readyTimeoutMs: readPositiveInt(env, 'READY_TIMEOUT_MS', 2_000),
    signingKeysRefreshMs: readPositiveInt(env, 'SIGNING_KEYS_REFRESH_SECONDS', 60) * 1000,
    accessTokenTtlSeconds: readPositiveInt(env, 'ACCESS_TOKEN_TTL_SECONDS', 900),
    aidc: {
      leaseSeconds: readPositiveInt(env, 'AIDC_LEASE_SECONDS', 60),
      maxAttempts: readPositiveInt(env, 'AIDC_MAX_ATTEMPTS', 3),
      reaperIntervalMs: readPositiveInt(env, 'AIDC_REAPER_INTERVAL_MS', 2_000),
    },
    transparencyLog: {
      sequenceIntervalMs: readPositiveInt(env, 'LOG_SEQUENCE_INTERVAL_MS', 1_000),
      sequenceGapMs: readMilliseconds(env, 'LOG_SEQUENCE_GAP_MS', 250, 60_000),
      treeHeadMaxAgeMs: readPositiveInt(env, 'LOG_TREE_HEAD_MAX_AGE_MS', 3_600_000),
    },
    registryConnectors: readRegistryConnectors(env, envName === 'production'),
    euRegistryUrl: readUrl(
      env,
      'EU_REGISTRY_URL',
      envName === 'production' ? ['https:'] : ['http:', 'https:'],
    ),
  };
}
