/**
 * Statements of the hot paths, built by Kysely once per dialect and shape and then run with new values.
 *
 * Kysely builds a query as a tree of frozen nodes and compiles the tree to SQL on every call: on the flat-out
 * print floor that was about a tenth of the control plane's thread and a quarter of what it allocated
 * (docs/benchmarks.md, round 23), for statements whose text never changes from one call to the next, only
 * their values. And each new text is a new string, which the statement caches (SQLite's prepared
 * statements, PostgreSQL's named ones) hash and compare again, character by character.
 *
 * `prepared(build)` calls `build` with sentinel values in place of its arguments' values, compiles the query
 * once, and remembers where each sentinel landed in the parameters; a later call with the same shape (the
 * same dialect, in a transaction or not, the same lengths of its lists, the same keys of its rows, nulls and
 * booleans in the same places) only
 * places the new values there, and hands back the same SQL string. A value the builder does not pass through
 * as a parameter (it tests it, transforms it, or writes it into the SQL) cannot be a sentinel: such a value
 * belongs in the statement's definition (one prepared statement for each), and with `DPP_VERIFY_PREPARED=1` (the
 * test suite sets it) every call is compiled afresh as well and compared, so a builder that decides on a
 * value fails loudly there instead of running the wrong statement.
 */
import type { Compilable, CompiledQuery, RootOperationNode } from 'kysely';
import { BoundedMap } from '@dpp/shared';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';

/** A value a statement takes as a parameter. */
type Scalar = string | number | bigint | boolean | null | Uint8Array | Date;
/** A row of values (an INSERT's row, an UPDATE's SET); an undefined value is left out, as Kysely leaves it out. */
type Row = Readonly<Record<string, Scalar | undefined>>;
/**
 * What a prepared statement's builder takes: values, lists of values, rows and lists of rows (a row is any plain
 * object of values, as a table's row type is).
 */
export type PreparedArg = Scalar | readonly Scalar[] | object | readonly object[];

type Arg = PreparedArg;

/**
 * Shapes kept per statement and dialect: a list's length is part of its shape, so a batch's sizes each have one.
 * With lists of at most {@link LONGEST_LIST} items a statement keeps at most about 64 x 4 KB of SQL.
 */
const SHAPES = 64;
/**
 * A call with a longer list is built and compiled as before, not kept: a bulk write's statement is large (a
 * 200-row INSERT's, with Kysely's tree, about 200 KB) and its cost is in its rows, not in building it.
 */
const LONGEST_LIST = 32;

const VERIFY = process.env.DPP_VERIFY_PREPARED === '1';

/** What every sentinel starts with, found again in a value a builder changed (any case, escaped or not). */
const SENTINEL = '\u0000prepared:';
const MARK = /prepared:/i;

interface Template<R> {
  compiled: CompiledQuery<R>;
  /**
   * For each parameter, the index of the value it takes, -1 for a constant of the query, or the indexes of the
   * values of a list sent as one parameter (PostgreSQL's `unnest($1::text[])`), -1 where it holds a constant.
   */
  slots: (number | number[])[];
}

const isRow = (v: unknown): v is Row =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  !(v instanceof Uint8Array) &&
  !(v instanceof Date);

/**
 * A scalar's mark in a shape: its kind, so that a builder that tells kinds apart gets a statement per kind. A
 * boolean is part of the shape, not a value (`t`, `f`): builders decide on flags (which conditions a claim
 * adds), and SQLite takes no boolean as a parameter anyway.
 */
function scalarMark(v: Scalar | undefined): string {
  switch (typeof v) {
    case 'string':
      return 's';
    case 'number':
      return 'n';
    case 'bigint':
      return 'i';
    case 'boolean':
      return v ? 't' : 'f';
    case 'undefined':
      return 'u';
    default:
      return v === null ? '0' : 'o';
  }
}

/** Marks that stand for themselves in a shape: the value is passed through as it is, never a parameter. */
const inShape = (mark: string) => mark === 'u' || mark === '0' || mark === 't' || mark === 'f';

/** A scalar's mark, its value collected when it is one. */
function scalarShape(v: Scalar | undefined, values: unknown[]): string {
  const mark = scalarMark(v);
  if (!inShape(mark)) values.push(v);
  return mark;
}

/**
 * A row's shape, its values collected: its marks, and its keys unless they are `keys` in that order (the rows of
 * one list mostly share theirs, and the list's shape names them once).
 */
function rowShape(r: Row, keys: readonly string[] | undefined, values: unknown[]): string {
  let marks = '';
  let i = 0;
  let same = keys !== undefined;
  for (const key in r) {
    if (same && keys![i++] !== key) same = false;
    const mark = scalarMark(r[key]);
    if (inShape(mark)) marks += mark;
    else {
      marks += '.';
      values.push(r[key]);
    }
  }
  return same && i === keys!.length ? `{:${marks}}` : `{${Object.keys(r).join(',')}:${marks}}`;
}

/**
 * Walks the arguments in one fixed order: the shape of each, and every value that becomes a parameter
 * (nulls and left-out values are part of the shape, not values). A row's shape is its keys in order and which
 * of its values are null or left out. Undefined when a list is longer than {@link LONGEST_LIST}.
 */
function shapeOf(args: readonly Arg[], values: unknown[]): string | undefined {
  let shape = '';
  for (const arg of args) {
    if (Array.isArray(arg)) {
      if (arg.length > LONGEST_LIST) return undefined;
      const first = arg[0] as unknown;
      const keys = isRow(first) ? Object.keys(first) : undefined;
      shape += `[${arg.length}${keys ? `(${keys.join(',')})` : ''}`;
      for (const item of arg as readonly (Scalar | Row)[])
        shape += isRow(item) ? rowShape(item, keys, values) : scalarShape(item, values);
      shape += ']';
    } else shape += isRow(arg) ? rowShape(arg, undefined, values) : scalarShape(arg as Scalar, values);
    shape += ';';
  }
  return shape;
}

/** The arguments with a sentinel in place of each value {@link shapeOf} collects, in the same order. */
function sentinelArgs(args: readonly Arg[]): { args: Arg[]; sentinels: string[] } {
  const sentinels: string[] = [];
  const scalar = (v: Scalar | undefined): Scalar | undefined => {
    if (inShape(scalarMark(v))) return v;
    const s = `${SENTINEL}${sentinels.length}`;
    sentinels.push(s);
    return s;
  };
  const row = (r: Row): Row => {
    const out: Record<string, Scalar | undefined> = {};
    for (const key in r) out[key] = scalar(r[key]);
    return out;
  };
  const out = args.map((arg): Arg => {
    if (Array.isArray(arg))
      return (arg as readonly (Scalar | Row)[]).map((i) => (isRow(i) ? row(i) : scalar(i)!)) as Arg;
    if (isRow(arg)) return row(arg);
    return scalar(arg as Scalar)!;
  });
  return { args: out, sentinels };
}

/**
 * A statement built by `build` once per dialect and shape: calling it compiles nothing after the first call
 * of a shape, and answers a query to run on any handle of that dialect (`db.executeQuery`, a write set),
 * in or out of a transaction.
 */
export function prepared<A extends readonly Arg[], R>(
  build: (db: Db, ...args: A) => Compilable<R> | CompiledQuery<R>,
): (db: Db, ...args: A) => CompiledQuery<R> {
  const byDialect = [
    new BoundedMap<string, Template<R>>(SHAPES),
    new BoundedMap<string, Template<R>>(SHAPES),
  ];
  return (db, ...args) => {
    const values: unknown[] = [];
    const argsShape = shapeOf(args, values);
    if (argsShape === undefined) return compiledOf(build(db, ...args));
    // A builder may tell a transaction's handle from the root's (a check the transaction makes redundant).
    const shape = (db.isTransaction ? 't;' : 'd;') + argsShape;
    const templates = byDialect[isPostgres(db) ? 1 : 0]!;
    let template = templates.get(shape);
    if (!template) {
      const { args: marked, sentinels } = sentinelArgs(args);
      const compiled = compiledOf(build(db, ...(marked as unknown as A)));
      const at = new Map(sentinels.map((s, i) => [s, i]));
      const slots = compiled.parameters.map((p): number | number[] => {
        if (typeof p === 'string') return at.get(p) ?? -1;
        // A list sent as one parameter: its values, and nulls (constants of the shape) in their places.
        if (Array.isArray(p) && p.some((e) => at.has(e as string)))
          return p.map((e) => at.get(e as string) ?? -1);
        return -1;
      });
      // A value the statement leaves out (a clause it omits for this shape) is fine; one it changed is not.
      const changed = [compiled.sql, ...compiled.parameters.flat()].find(
        (p, i) => typeof p === 'string' && MARK.test(p) && (i === 0 || !at.has(p)),
      );
      if (changed !== undefined) {
        throw new TypeError(
          `a prepared statement's builder changed a value or wrote it into its SQL instead of passing it through as a parameter; build a statement for each such value instead: ${compiled.sql}`,
        );
      }
      // Kept without Kysely's operation tree: only its kind and what a write returns are read of it (write and
      // read sets), and the tree of a many-row statement is many times its text.
      template = { compiled: { ...compiled, query: queryKind(compiled.query) }, slots };
      templates.set(shape, template);
    }
    const { compiled, slots } = template;
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i]!;
      if (typeof slot === 'number') parameters[i] = slot < 0 ? compiled.parameters[i] : values[slot];
      else {
        const constant = compiled.parameters[i] as unknown[];
        parameters[i] = slot.map((v, k) => (v < 0 ? constant[k] : values[v]));
      }
    }
    const query: CompiledQuery<R> = { ...compiled, parameters };
    if (VERIFY) verifyAgainstBuild(build, db, args, query);
    return query;
  };
}

/** What is kept of a statement's operation tree: its kind, and a write's RETURNING. */
function queryKind(node: RootOperationNode): RootOperationNode {
  const returning = (node as { returning?: unknown }).returning;
  return (
    returning === undefined ? { kind: node.kind } : { kind: node.kind, returning }
  ) as RootOperationNode;
}

/** A builder's query compiled (a raw `sql` query is compiled by its builder, with the handle). */
function compiledOf<R>(built: Compilable<R> | CompiledQuery<R>): CompiledQuery<R> {
  return 'compile' in built ? built.compile() : built;
}

/** Compiles the statement afresh and throws unless it is the one prepared (DPP_VERIFY_PREPARED=1). */
function verifyAgainstBuild<A extends readonly Arg[], R>(
  build: (db: Db, ...args: A) => Compilable<R> | CompiledQuery<R>,
  db: Db,
  args: A,
  query: CompiledQuery<R>,
): void {
  const fresh = compiledOf(build(db, ...args));
  const same =
    fresh.sql === query.sql &&
    fresh.parameters.length === query.parameters.length &&
    fresh.parameters.every((p, i) => sameValue(p, query.parameters[i]));
  if (!same) {
    throw new Error(
      `a prepared statement differs from its builder's query for these values:\n${query.sql}\n${JSON.stringify(query.parameters)}\nagainst\n${fresh.sql}\n${JSON.stringify(fresh.parameters)}`,
    );
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  return false;
}
