/**
 * Writes of one transaction that depend on nothing read or written between them, sent together. On
 * PostgreSQL they go as one statement, each write a data-modifying CTE of it, so they cost one round trip
 * instead of one each (a sealed batch of results had a dozen); on SQLite, an in-process library with no
 * round trips to save, they run one after another. Either way they run in the caller's transaction.
 *
 * A write may say how many rows it must change (a guarded UPDATE that checks nobody moved its rows, an
 * INSERT ... ON CONFLICT DO NOTHING that checks no twin came first): `flush` then throws
 * {@link WriteSetMismatch} when one changed another number. The counts are known only once the writes are
 * done, so the caller rolls them back (to a savepoint, or by failing its transaction), as it would after a
 * write of its own that found its rows moved.
 *
 * What a data-modifying CTE may do is narrower than a statement: all the writes see the snapshot taken
 * before the set, not each other's rows, and no row may be changed by two writes of one set. So a set
 * holds writes to different rows whose values were computed before it (a row and the rows referring to
 * it are fine: foreign keys are checked at the end of the statement).
 */
import {
  type Compilable,
  CompiledQuery,
  DeleteQueryNode,
  InsertQueryNode,
  type RootOperationNode,
  UpdateQueryNode,
} from 'kysely';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';

/** A write's expected number of changed rows, and what it means when another number changed. */
export interface Expectation {
  rows: number;
  /** Said by the error when the count differs, e.g. `a job of the batch moved since the batch read it`. */
  otherwise: string;
}

/** Thrown by {@link WriteSet.flush} when a write changed another number of rows than it expected. */
export class WriteSetMismatch extends Error {
  override readonly name = 'WriteSetMismatch';
  constructor(
    readonly expected: number,
    readonly changed: number,
    what: string,
  ) {
    super(`${what} (expected ${expected} rows changed, ${changed} were)`);
  }
}

/** PostgreSQL takes at most 65,535 parameters a statement; a set larger than this goes in several. */
const MAX_PARAMETERS = 30_000;

export class WriteSet {
  private readonly writes: { query: CompiledQuery; expect: Expectation | undefined }[] = [];

  /** Adds an INSERT, UPDATE or DELETE built by Kysely (not raw SQL: its parameters are renumbered). */
  add(query: Compilable, expect?: Expectation): this {
    const compiled = query.compile();
    if (!isWrite(compiled.query)) throw new TypeError('a write set takes INSERT, UPDATE and DELETE queries');
    this.writes.push({ query: compiled, expect });
    return this;
  }

  get size(): number {
    return this.writes.length;
  }

  /** Runs every write added, in `trx`, and empties the set. */
  async flush(trx: Db): Promise<void> {
    const writes = this.writes.splice(0);
    if (writes.length === 0) return;
    if (!isPostgres(trx) || writes.length === 1) {
      for (const { query, expect } of writes) {
        const result = await trx.executeQuery(query);
        check(expect, Number(result.numAffectedRows ?? 0));
      }
      return;
    }
    for (const part of byParameters(writes)) {
      const { rows } = await trx.executeQuery<Record<string, number>>(together(part.map((w) => w.query)));
      part.forEach((w, i) => check(w.expect, Number(rows[0]![`w${i}`])));
    }
  }
}

function isWrite(node: RootOperationNode): boolean {
  return InsertQueryNode.is(node) || UpdateQueryNode.is(node) || DeleteQueryNode.is(node);
}

function check(expect: Expectation | undefined, changed: number): void {
  if (expect && changed !== expect.rows) throw new WriteSetMismatch(expect.rows, changed, expect.otherwise);
}

/** Consecutive runs of writes whose parameters together stay under {@link MAX_PARAMETERS}. */
function byParameters<T extends { query: CompiledQuery }>(writes: readonly T[]): T[][] {
  const parts: T[][] = [];
  let count = 0;
  for (const w of writes) {
    const n = w.query.parameters.length;
    if (parts.length === 0 || count + n > MAX_PARAMETERS) {
      parts.push([]);
      count = 0;
    }
    parts[parts.length - 1]!.push(w);
    count += n;
  }
  return parts;
}

/**
 * One statement: `with w0 as (<write> returning 1), w1 as (...) select (select count(*) from w0) as w0, ...`,
 * each write's `$n` moved past the parameters of the writes before it ({@link shiftParameters}).
 */
function together(queries: readonly CompiledQuery[]): CompiledQuery {
  const parameters: unknown[] = [];
  const ctes = queries.map((q, i) => {
    const offset = parameters.length;
    parameters.push(...q.parameters);
    const text = shiftParameters(q.sql, offset);
    const returning = (q.query as { returning?: unknown }).returning !== undefined;
    return `w${i} as (${text}${returning ? '' : ' returning 1'})`;
  });
  const counts = queries.map((_, i) => `(select count(*) from w${i})::int as w${i}`);
  return CompiledQuery.raw(`with ${ctes.join(', ')} select ${counts.join(', ')}`, parameters);
}

/**
 * A statement's PostgreSQL parameters `$n` renumbered to follow `offset` others, for statements put together
 * in one. Kysely's PostgreSQL compiler writes every value of a builder query as a parameter, so `$` followed
 * by digits in its SQL is always one.
 */
export function shiftParameters(sql: string, offset: number): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
}
