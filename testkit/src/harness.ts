import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  type CallOptions,
  type CallResult,
  type Config,
  type ControlPlane,
  type MailMessage,
  type SeedFile,
  type StartOptions,
  freePort,
  httpCaller,
  loadConfig,
  startControlPlane,
} from '@dpp/control-plane';

export type DialectName = 'sqlite' | 'postgres';

/** The databases the store suites run on: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export function testDialects(): DialectName[] {
  return process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

/** Whether PostgreSQL suites run; when not, the global setup says so plainly. */
export const postgresAvailable = (): boolean => Boolean(process.env.TEST_DATABASE_URL);

export interface SeededKey {
  secret: string;
  scopes: string[];
}

export interface SeededTenant {
  id: string;
  name: string;
  tier: 'free' | 'mid_market' | 'enterprise';
  /** Key with every scope ("*"). */
  admin: string;
  /** Key with products:read only. */
  readOnly: string;
  /** Key with no scopes at all. */
  noScopes: string;
}

export interface TestControlPlane {
  cp: ControlPlane;
  url: string;
  dialect: DialectName;
  /** DATA_DIR of the control plane (its SQLite file, keys). */
  dataDir: string;
  /** On PostgreSQL: a DATABASE_URL that reaches this control plane's schema (for another process). */
  databaseUrl: string | null;
  /** `sandbox` is a live (unexpired) sandbox workspace on the mid_market tier. */
  tenants: { a: SeededTenant; b: SeededTenant; expired: SeededTenant; sandbox: SeededTenant };
  /** Every email the control plane sent, oldest first (kept here instead of logged). */
  mail: MailMessage[];
  /** Fetch against the control plane with a bearer key and JSON body. */
  call(method: string, path: string, opts?: CallOptions): Promise<CallResult>;
  /**
   * Stops this control plane and starts a new one on the same storage (SQLite file or PostgreSQL
   * schema), as after a crash and restart; `cp` and `url` then name the new one.
   */
  restart(options?: RestartOptions): Promise<void>;
  /**
   * Another replica on the same PostgreSQL schema (and broker, with MQTT_URL): its own port and workers, no
   * seed. Closed with the rest by `close()`; stop it earlier with its own `close()`.
   */
  replica(): Promise<ControlPlane>;
  close(): Promise<void>;
}

/** What a test may change about how a control plane starts (webhook tuning, workers left off). */
export type RestartOptions = Pick<StartOptions, 'webhooks' | 'outbox' | 'ingest' | 'passports'>;

function secret(): string {
  return `dpp_sk_test_${randomBytes(18).toString('base64url')}`;
}

function tenant(name: string, tier: SeededTenant['tier']): SeededTenant {
  return { id: randomUUID(), name, tier, admin: secret(), readOnly: secret(), noScopes: secret() };
}

const LIVE_SANDBOX_EXPIRY = '2099-01-01T00:00:00Z';

function seedOf(ts: SeededTenant[], expiredId: string, sandboxId?: string): SeedFile {
  return {
    tenants: ts.map((t) => ({
      id: t.id,
      name: t.name,
      tier: t.tier,
      sandbox: t.id === expiredId || t.id === sandboxId,
      sandboxExpiresAt:
        t.id === expiredId ? '2020-01-01T00:00:00Z' : t.id === sandboxId ? LIVE_SANDBOX_EXPIRY : null,
      apiKeys: [
        { secret: t.admin, scopes: ['*'], name: 'admin' },
        { secret: t.readOnly, scopes: ['products:read'], name: 'read-only' },
        { secret: t.noScopes, scopes: [], name: 'no-scopes' },
      ],
    })),
  };
}

/**
 * Starts on ports that were free when picked, and picks again when one was taken before the start bound it
 * (suites run in parallel, each picking ports): a start that fails with EADDRINUSE has stopped what it began.
 */
async function onFreePorts<T>(start: () => Promise<T>, pickAgain: () => Promise<void>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 5 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      await pickAgain();
    }
  }
}

/**
 * Starts a real control plane on a free port with a fresh database (a new SQLite file, or a new
 * PostgreSQL schema that is dropped on close) and a seed of three tenants.
 */
export async function startTestControlPlane(
  options: {
    dialect?: DialectName;
    env?: Record<string, string>;
    mqtt?: boolean;
    /**
     * Values set on the loaded configuration, e.g. `{ env: 'production' }`, which the environment cannot
     * express together with the test seed (production refuses DPP_SEED_FILE).
     */
    config?: Partial<Config>;
    /** The control plane's clock (tests move it forward to cross lifetimes and leases). */
    now?: () => number;
  } & RestartOptions = {},
): Promise<TestControlPlane> {
  const dialect = options.dialect ?? 'sqlite';
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dpp-cp-'));
  const tenants = {
    a: tenant('Tenant A', 'mid_market'),
    b: tenant('Tenant B', 'free'),
    expired: tenant('Expired Sandbox', 'free'),
    sandbox: tenant('Live Sandbox', 'mid_market'),
  };
  const seedFile = path.join(dir, 'seed.json');
  await fs.writeFile(
    seedFile,
    JSON.stringify(seedOf(Object.values(tenants), tenants.expired.id, tenants.sandbox.id)),
  );
  const pgUrl = process.env.TEST_DATABASE_URL;
  if (dialect === 'postgres' && !pgUrl) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const configOnFreePorts = async (): Promise<Config> => ({
    ...loadConfig({
      DPP_ENV: 'test',
      // A concrete port, so the advertised URLs (issuer, token endpoint, Digital Links) are reachable.
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      MQTT_PORT: options.mqtt ? String(await freePort()) : '0',
      DATA_DIR: dir,
      DPP_SEED_FILE: seedFile,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      // Every test calls from 127.0.0.1: the per-IP budgets stay out of the way unless a test sets its own.
      IP_RATE_LIMITS: 'public=1000000/60,credentials=1000000/60,failures=1000000/60',
      ...(dialect === 'postgres' ? { DATABASE_URL: pgUrl! } : {}),
      ...options.env,
    }),
    ...options.config,
  });
  let config = await configOnFreePorts();
  const mail: MailMessage[] = [];
  const startOn = (o: RestartOptions) =>
    startControlPlane(config, {
      store: dialect === 'postgres' ? { pgSchema: schema } : {},
      mailer: { send: async (message) => void mail.push(message) },
      ...(options.now ? { now: options.now } : {}),
      ...(o.webhooks ? { webhooks: o.webhooks } : {}),
      ...(o.outbox ? { outbox: o.outbox } : {}),
      ...(o.ingest ? { ingest: o.ingest } : {}),
      ...(o.passports ? { passports: o.passports } : {}),
    });
  let cp = await onFreePorts(
    () => startOn(options),
    async () => void (config = await configOnFreePorts()),
  );
  const replicas: ControlPlane[] = [];
  // The demo's caller, aimed at whichever control plane is current (restart() replaces it).
  const call = (method: string, p: string, opts: CallOptions = {}): Promise<CallResult> =>
    httpCaller(cp.url)(method, p, opts);
  const t: TestControlPlane = {
    cp,
    url: cp.url,
    dialect,
    dataDir: dir,
    databaseUrl:
      dialect === 'postgres'
        ? `${pgUrl!}${pgUrl!.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`
        : null,
    tenants,
    mail,
    call,
    restart: async (o = {}) => {
      await cp.close();
      cp = await startOn(o);
      t.cp = cp;
      t.url = cp.url;
    },
    replica: async () => {
      if (dialect !== 'postgres')
        throw new Error('replicas share a PostgreSQL database; SQLite is one process');
      let port = await freePort();
      const r = await onFreePorts(
        () =>
          startControlPlane(
            { ...config, port, seedFile: undefined },
            {
              store: { pgSchema: schema },
              mailer: { send: async (message) => void mail.push(message) },
              ...(options.now ? { now: options.now } : {}),
            },
          ),
        async () => void (port = await freePort()),
      );
      replicas.push(r);
      return r;
    },
    close: async () => {
      for (const r of replicas) await r.close().catch(() => undefined);
      await cp.close().catch(() => undefined);
      if (dialect === 'postgres') {
        const client = new pg.Client({ connectionString: pgUrl });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
      }
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
  return t;
}
