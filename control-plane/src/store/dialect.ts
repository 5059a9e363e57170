import { PostgresAdapter } from 'kysely';
import type { Db } from './database.js';

/** Whether a connection (or transaction) talks to PostgreSQL; SQLite otherwise. */
export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * A unique-constraint violation on either dialect: SQLite `SQLITE_CONSTRAINT_UNIQUE` / `_PRIMARYKEY`,
 * PostgreSQL SQLSTATE 23505.
 */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
