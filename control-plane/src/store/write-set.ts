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
 * A set may also stand alone ({@link WriteSet.flushAlone}): on PostgreSQL, when it fits one statement, that
 * statement runs outside any transaction and checks the counts itself, so a mismatch undoes every write of
 * it. A caller whose reads need no lock (they are checked again by guarded writes) then saves BEGIN and
 * COMMIT: one round trip where there were three.
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
import { ComposedTexts } from './composed-text.js';
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

  /** Adds an INSERT, UPDATE or DELETE built by Kysely (or compiled already: store/prepared.ts). */
  add(query: Compilable | CompiledQuery, expect?: Expectation): this {
    const compiled = 'compile' in query ? query.compile() : query;
    if (!isWrite(compiled.query)) throw new TypeError('a write set takes INSERT, UPDATE and DELETE queries');
    this.writes.push({ query: compiled, expect });
    return this;
  }

  /**
   * Adds a write written as raw SQL (`sql\`update ...\`.compile(db)`), for what Kysely's builder cannot say
   * (an UPDATE ... FROM unnest(...) on PostgreSQL), without a RETURNING clause. Its values must all be
   * parameters, as `sql` makes them: its `$n` are renumbered when the set goes as one statement.
   */
  addRaw(query: CompiledQuery, expect?: Expectation): this {
    if (!/^\s*(insert|update|delete)\b/i.test(query.sql)) {
      throw new TypeError('a write set takes INSERT, UPDATE and DELETE queries');
    }
    this.writes.push({ query, expect });
    return this;
  }

  get size(): number {
    return this.writes.length;
  }

  /**
   * Runs every write added as a unit of its own, outside any transaction of the caller's (`db` is the root
   * handle), and empties the set. On PostgreSQL a set that fits one statement is that statement alone, its
   * expectations checked inside it ({@link together}), so when one fails nothing of the set is written; a
   * larger set, and SQLite, run in a transaction of their own. Throws {@link WriteSetMismatch} as
   * {@link flush} does.
   */
  async flushAlone(db: Db): Promise<void> {
    if (this.writes.length === 0) return;
    if (!isPostgres(db) || byParameters(this.writes).length > 1) {
      await db.transaction().execute((trx) => this.flush(trx));
      return;
    }
    const writes = this.writes.splice(0);
    const checked = together(
      writes.map((w) => w.query),
      writes.map((w) => w.expect),
    );
    // The statement checks every expectation itself: it fails whole when a count differs.
    await db.executeQuery(checked).catch((err: unknown) => {
      throw mismatchIn(err, writes) ?? err;
    });
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

/** What the statement of a set that checks its own counts says when one differs (see {@link together}). */
const MISMATCH = 'write set mismatch:';

/**
 * One statement: `with w0 as (<write> returning 1), w1 as (...) select (select count(*) from w0) as w0, ...`,
 * each write's `$n` moved past the parameters of the writes before it ({@link shiftParameters}).
 *
 * With `expect`, the statement checks the counts itself and fails when one differs, so that none of its
 * writes stands: PostgreSQL has no way to raise an error in plain SQL, but a cast of text to an integer
 * fails at run time with the text in its message (`invalid input syntax for type integer: "write set
 * mismatch: 3 20"`, every count in order). The text is built from the counts, not a constant, so the
 * planner cannot fold the cast and fail the statement before it runs.
 */
function together(
  queries: readonly CompiledQuery[],
  expect?: readonly (Expectation | undefined)[],
): CompiledQuery {
  const parameters: unknown[] = [];
  for (const q of queries) parameters.push(...q.parameters);
  const returning = (q: CompiledQuery) => (q.query as { returning?: unknown }).returning !== undefined;
  // What decides the text besides the writes' own: whether each returns rows, and each expected count.
  const rest = queries.map((q, i) => `${returning(q) ? 'r' : ''}${expect?.[i]?.rows ?? ''}`).join(',');
  const text = composedSets.text(
    queries.map((q) => q.sql),
    rest,
    () => {
      let offset = 0;
      const ctes = queries.map((q, i) => {
        const shifted = shiftParameters(q.sql, offset);
        offset += q.parameters.length;
        return `w${i} as (${shifted}${returning(q) ? '' : ' returning 1'})`;
      });
      const counts = queries.map((_, i) => `(select count(*) from w${i})::int as w${i}`);
      const guarded = (expect ?? []).flatMap((e, i) => (e ? [`c.w${i} = ${e.rows}`] : []));
      if (guarded.length === 0) return `with ${ctes.join(', ')} select ${counts.join(', ')}`;
      const columns = queries.map((_, i) => `c.w${i}`);
      const mismatch = `'${MISMATCH}' || ${columns.map((c) => `' ' || ${c}`).join(' || ')}`;
      return (
        `with ${ctes.join(', ')}, c as (select ${counts.join(', ')}) ` +
        `select ${columns.join(', ')}, case when ${guarded.join(' and ')} then 0 else (${mismatch})::int end as checked ` +
        'from c'
      );
    },
  );
  return CompiledQuery.raw(text, parameters);
}

/** The texts of the sets composed so far (store/composed-text.ts). */
const composedSets = new ComposedTexts();

/** The {@link WriteSetMismatch} a set's own check failed with, read from the error; null for any other error. */
function mismatchIn(
  err: unknown,
  writes: readonly { expect: Expectation | undefined }[],
): WriteSetMismatch | null {
  const message = err instanceof Error ? err.message : '';
  const at = message.indexOf(MISMATCH);
  if (at < 0) return null;
  const counts = message
    .slice(at + MISMATCH.length)
    .match(/\d+/g)
    ?.map(Number);
  if (!counts || counts.length !== writes.length) return null;
  for (let i = 0; i < writes.length; i++) {
    const expect = writes[i]!.expect;
    if (expect && counts[i] !== expect.rows)
      return new WriteSetMismatch(expect.rows, counts[i]!, expect.otherwise);
  }
  return null;
}

/**
 * A statement's PostgreSQL parameters `$n` renumbered to follow `offset` others, for statements put together
 * in one. Kysely's PostgreSQL compiler writes every value of a builder query as a parameter, so `$` followed
 * by digits in its SQL is always one.
 */
export function shiftParameters(sql: string, offset: number): string {
  if (offset === 0) return sql;
  // A scan, not a replace with a callback: a results batch's writes carry hundreds of parameters, and the
  // regular expression's callback per match was 2 % of the control plane's thread on a sealing floor.
  let out = '';
  let from = 0;
  for (let at = sql.indexOf('$'); at !== -1; at = sql.indexOf('$', at + 1)) {
    let end = at + 1;
    let n = 0;
    for (let c = sql.charCodeAt(end); c >= 48 && c <= 57; c = sql.charCodeAt(++end)) n = n * 10 + (c - 48);
    if (end === at + 1) continue;
    out += sql.slice(from, at + 1) + String(n + offset);
    from = end;
    at = end - 1;
  }
  return out + sql.slice(from);
}
