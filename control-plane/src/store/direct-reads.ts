/**
 * Reads straight on the driver, for the few statements every scan runs (public/lookup.ts): the statement
 * is prepared once (a better-sqlite3 statement; on PostgreSQL a named prepared statement, parsed
 * once per pooled connection) and run without Kysely's per-query work (connection provider, the driver's
 * mutex, result plugins), which costs about as much as the indexed read itself. The SQL is still built
 * and compiled by Kysely, once; the rows are the driver's, as Kysely would hand them over.
 */
import type SQLite from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import type { Db } from './database.js';
import { statementName } from './pg-statements.js';
import { prepared } from './prepared.js';
import type { GuardedKysely } from './unit-of-work.js';

/** For a fixed set of statements (each is kept prepared for as long as the store is open). */
export interface DirectReads {
  /** The rows of a read-only statement, run in the handle's turn for the connection. */
  all<R>(sql: string, parameters: readonly unknown[]): Promise<R[]>;
}

const readers = new WeakMap<object, DirectReads>();

/** The direct reads of a store's root handle; undefined for a transaction or any other handle. */
export function directReads(db: Db): DirectReads | undefined {
  return readers.get(db);
}

/**
 * A fixed-shape read of a hot path (every scan's public lookups, every device call's principal): its SQL is built
 * and compiled once (store/prepared.ts) and run with new parameters, straight on the driver where the store allows
 * it (the builder and Kysely's executor cost more than an indexed lookup).
 */
export function preparedRead<R, A extends string[]>(
  build: (db: Db, ...args: A) => { compile(): CompiledQuery<R> },
) {
  const statement = prepared(build);
  return (db: Db, ...args: A): Promise<R[]> => {
    const compiled = statement(db, ...args);
    const direct = directReads(db);
    if (direct) return direct.all<R>(compiled.sql, compiled.parameters);
    return db.executeQuery<R>(compiled).then((r) => r.rows);
  };
}

/** A read-only statement kept prepared, its rows read as arrays, and the names of its columns. */
interface RawStatement {
  statement: SQLite.Statement;
  columns: string[];
}

/**
 * The rows as objects, made here from the arrays SQLite hands over: better-sqlite3 builds a row object
 * through V8's API one property at a time, which costs more than the indexed read of a lookup's few rows.
 */
function rowsOf<R>({ statement, columns }: RawStatement, parameters: readonly unknown[]): R[] {
  const rows = statement.all(parameters) as unknown[][];
  const out: R[] = [];
  for (const values of rows) {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
    out.push(row as R);
  }
  return out;
}

/** On SQLite: each statement prepared once on the one connection, run in the connection's turn. */
export function enableSqliteReads<DB>(db: GuardedKysely<DB>, database: SQLite.Database): void {
  const statements = new Map<string, RawStatement>();
  const statementOf = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      // A statement of its own (the connection's statement cache would share one of the same text with
      // Kysely, which reads rows as objects).
      const prepared = database.prepare(`/* direct read */ ${sql}`).raw(true);
      statement = { statement: prepared, columns: prepared.columns().map((c) => c.name) };
      statements.set(sql, statement);
    }
    return statement;
  };
  readers.set(db, {
    all: <R>(sql: string, parameters: readonly unknown[]) =>
      db.withConnection(() => rowsOf<R>(statementOf(sql), parameters)),
  });
}

/**
 * On PostgreSQL: named statements, each parsed once per pooled connection (the name is the SQL's hash, so
 * one name never stands for two texts, and a text the driver's other statements name too has the same name).
 */
export function enablePostgresReads<DB>(db: GuardedKysely<DB>, pool: pg.Pool): void {
  const names = new Map<string, string>();
  const nameOf = (sql: string) => {
    let name = names.get(sql);
    if (!name) {
      name = statementName(sql);
      names.set(sql, name);
    }
    return name;
  };
  readers.set(db, {
    all: async <R>(sql: string, parameters: readonly unknown[]) => {
      const query = { name: nameOf(sql), text: sql, values: [...parameters] };
      return (await db.withConnection(() => pool.query(query))).rows as R[];
    },
  });
}
