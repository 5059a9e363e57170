import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { BoundedMap } from '@dpp/shared';
import { type Kysely, type MigrationResult, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';
import { GuardedKysely } from './unit-of-work.js';
import { enablePostgresReads, enableSqliteReads } from './direct-reads.js';
import { StatementNames, nameRepeatedStatements } from './pg-statements.js';
import {
  type CheckpointStats,
  type Checkpointer,
  SAFETY_NET_PAGES,
  startCheckpointer,
} from './checkpointer.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;

export interface Store {
  db: Db;
  dialect: Dialect;
  /** Pings the database; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Closes at once, whatever holds a connection (shutdown past its grace): on SQLite the file handle is
   * closed, so an open transaction rolls back and the file's locks go with it; on PostgreSQL the pool is
   * ended without waiting for connections stuck in a query (the process exit closes their sockets).
   * Resolves once nothing of the store holds the file (SQLite's checkpointer has closed its connection too).
   */
  forceClose(): Promise<void>;
  /** On SQLite with a file, what its WAL checkpointer saw (store/checkpointer.ts); absent otherwise. */
  checkpoints?(): CheckpointStats;
}

export interface StoreOptions {
  /** `postgres://...`; when absent, SQLite at `sqliteFile`. */
  databaseUrl?: string | undefined;
  sqliteFile?: string;
  /** PostgreSQL schema to use (tests give each suite its own). Created when missing. */
  pgSchema?: string;
  pgPoolSize?: number;
}

// PostgreSQL returns int8 (e.g. count(*)) as strings by default; our counts fit in a JS number.
pg.types.setTypeParser(20, (v: string) => Number(v));

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares each query anew; preparing costs more than running most of our
 * statements. Kysely holds the one connection under a mutex, so a cached statement is never used by two
 * queries at once.
 */
function withStatementCache(database: SQLite.Database): SQLite.Database {
  const cache = new BoundedMap<string, SQLite.Statement>(STATEMENT_CACHE_SIZE);
  const prepare = database.prepare.bind(database);
  database.prepare = ((source: string) => {
    // Set again when used, so the statements in use stay.
    const stmt = cache.get(source) ?? prepare(source);
    cache.set(source, stmt);
    return stmt;
  }) as SQLite.Database['prepare'];
  return database;
}

interface Opened {
  db: Db;
  forceClose(): Promise<void>;
  /** What SQLite's checkpointer saw. */
  checkpoints?(): CheckpointStats;
  /** Stops what runs beside the connection (SQLite's checkpointer). */
  stop?(): Promise<void>;
}

/** How often the checkpointer moves the WAL into the database file. */
const CHECKPOINT_INTERVAL_MS = 500;
/**
 * A growing WAL this large (20 MB with 4 KiB pages) is checkpointed in a quiet moment, so that it starts again
 * (store/checkpointer.ts). A quiet pass held the writer 7-28 ms on the benchmark machine (docs/benchmarks.md),
 * its two fsyncs most of it: about once a second on a floor sealing 300 jobs a second.
 */
const RESTART_PAGES = 5_000;

function openSqlite(file: string): Opened {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const db = new GuardedKysely<Database>({
    dialect: new SqliteDialect({ database: withStatementCache(database) }),
    singleConnection: true,
  });
  enableSqliteReads(db, database);
  // Checkpoints run beside the writer (store/checkpointer.ts); an in-memory database has no WAL.
  let checkpointer: Checkpointer | null = null;
  if (file !== ':memory:') {
    database.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
    checkpointer = startCheckpointer(file, {
      intervalMs: CHECKPOINT_INTERVAL_MS,
      restartPages: RESTART_PAGES,
      quiet: (pass) => db.exclusive(pass),
      onFailure: () => {
        if (database.open) database.pragma('wal_autocheckpoint = 1000');
      },
    });
  }
  return {
    db,
    forceClose: async () => {
      if (database.open) database.close();
      // The checkpointer's connection may be the file's last: its close checkpoints and takes the file's
      // locks, so the store is closed only once that is done (another process may open the file next).
      await checkpointer?.stop();
    },
    stop: async () => {
      await checkpointer?.stop();
    },
    ...(checkpointer ? { checkpoints: checkpointer.stats } : {}),
  };
}

function openPostgres(url: string, schema: string | undefined, max: number): Opened {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const db = new GuardedKysely<Database>({ dialect: new PostgresDialect({ pool }), poolSize: max });
  enablePostgresReads(db, pool);
  nameRepeatedStatements(pool, new StatementNames());
  return {
    db,
    forceClose: () => {
      if (!pool.ending) pool.end().catch(() => undefined);
      return Promise.resolve();
    },
  };
}

/** Opens the store and runs pending migrations. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const dialect: Dialect = options.databaseUrl ? 'postgres' : 'sqlite';
  if (dialect === 'postgres' && options.pgSchema) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.pgSchema)) throw new Error(`bad schema name ${options.pgSchema}`);
    const admin = new pg.Client({ connectionString: options.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${options.pgSchema}`);
    } finally {
      await admin.end();
    }
  }
  const { db, forceClose, stop, checkpoints } =
    dialect === 'postgres'
      ? openPostgres(options.databaseUrl!, options.pgSchema, options.pgPoolSize ?? 10)
      : openSqlite(options.sqliteFile ?? ':memory:');
  try {
    await migrate(db, dialect, dialect === 'postgres' ? options.pgSchema : undefined);
  } catch (err) {
    await stop?.();
    await db.destroy();
    throw err;
  }
  return {
    db,
    dialect,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await stop?.();
      await db.destroy();
    },
    forceClose,
    ...(checkpoints ? { checkpoints } : {}),
  };
}

async function migrate(db: Db, dialect: Dialect, pgSchema: string | undefined): Promise<void> {
  // Kysely's bookkeeping tables live in the schema the store works in: otherwise Kysely looks for them in any
  // schema of the database, finds another deployment's (or a stray half-migrated schema's), skips creating its
  // own, and fails. Without a schema option that is the schema DATABASE_URL's search_path makes current.
  if (dialect === 'postgres' && !pgSchema) {
    const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    pgSchema = rows[0]?.schema ?? undefined;
  }
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    // Migrations only add tables of new domains, so one numbered below an applied one may still run.
    allowUnorderedMigrations: true,
    ...(pgSchema ? { migrationTableSchema: pgSchema } : {}),
  });
  // Kysely checks for its bookkeeping tables by reading the tables (and their columns' sequences) of every
  // schema in the database; DDL another user of the database runs meanwhile (parallel test suites, other
  // services dropping a schema or migrating theirs) fails that read: 3F000 invalid_schema_name, 42P01
  // undefined_table, 42703 undefined_column. Nothing ran yet when that happens, so it is tried again.
  let { error, results } = await migrator.migrateToLatest();
  for (let retry = 1; error && raceBeforeAnyMigration(error, results) && retry <= 10; retry++) {
    await new Promise((r) => setTimeout(r, 50 * retry));
    ({ error, results } = await migrator.migrateToLatest());
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(error)}`, {
      cause: error,
    });
  }
}

const CONCURRENT_DDL = new Set(['3F000', '42P01', '42703']);

/** The migrator failed reading the catalog while another session changed it, before any migration ran. */
export function raceBeforeAnyMigration(
  err: unknown,
  results: readonly MigrationResult[] | undefined,
): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && CONCURRENT_DDL.has(code) && !results?.some((r) => r.status === 'Error');
}

/** The current instant as stored: ISO 8601 UTC with milliseconds. */
export function nowIso(clock: () => number = Date.now): string {
  return new Date(clock()).toISOString();
}
