/**
 * Reads of one transaction that depend on nothing read between them, sent together: the reads' side of
 * store/write-set.ts. On PostgreSQL they go as one statement whose columns carry each read's rows as JSON,
 * so they cost one round trip instead of one each (a batch of print results read its jobs, their attempts,
 * its Idempotency-Keys and the device's key in four) and all see one snapshot; on SQLite, an in-process
 * library with no round trips to save, they run one after another.
 *
 * JSON carries text, integers and booleans as the driver hands them over, which is every column these reads
 * take (timestamps are text in this store); it does not keep the order of a read's rows (`json_agg` of a
 * subquery promises none), so a read whose order matters sorts its rows itself.
 */
import { CompiledQuery, SelectQueryNode } from 'kysely';
import type { Db } from './database.js';
import { isPostgres } from './dialect.js';
import { ComposedTexts } from './composed-text.js';
import { shiftParameters } from './write-set.js';

/** PostgreSQL takes at most 65,535 parameters a statement; reads beyond this go one after another. */
const MAX_PARAMETERS = 30_000;
const NAME = /^[a-z_][a-z0-9_]*$/i;

type Rows<Q> = Q extends CompiledQuery<infer R> ? R[] : never;

/** Runs every read (SELECTs built by Kysely, or its raw SQL) in `db` and returns each one's rows by name. */
export async function readTogether<Q extends Record<string, CompiledQuery<unknown>>>(
  db: Db,
  reads: Q,
): Promise<{ [K in keyof Q]: Rows<Q[K]> }> {
  const entries = Object.entries(reads);
  for (const [name, query] of entries) {
    if (!NAME.test(name)) throw new TypeError(`a read is named like a column: ${name}`);
    if (!SelectQueryNode.is(query.query) && !query.sql.trimStart().toLowerCase().startsWith('select'))
      throw new TypeError('a read set takes SELECT queries');
  }
  const out: Record<string, unknown[]> = {};
  const parameters = entries.reduce((n, [, q]) => n + q.parameters.length, 0);
  if (!isPostgres(db) || entries.length === 1 || parameters > MAX_PARAMETERS) {
    for (const [name, query] of entries) out[name] = (await db.executeQuery(query)).rows;
    return out as { [K in keyof Q]: Rows<Q[K]> };
  }
  const { rows } = await db.executeQuery<Record<string, unknown[]>>(together(entries));
  for (const [name] of entries) out[name] = rows[0]![name]!;
  return out as { [K in keyof Q]: Rows<Q[K]> };
}

/**
 * One statement: `select (select coalesce(json_agg(r0), '[]') from (<read>) as r0) as "jobs", ...`, each
 * read's `$n` moved past the parameters of the reads before it.
 */
function together(entries: readonly [string, CompiledQuery<unknown>][]): CompiledQuery {
  const parameters: unknown[] = [];
  for (const [, q] of entries) parameters.push(...q.parameters);
  const text = composedReads.text(
    entries.map(([, q]) => q.sql),
    entries.map(([name, q]) => `${name}:${q.parameters.length}`).join(','),
    () => {
      let offset = 0;
      const columns = entries.map(([name, q], i) => {
        const shifted = shiftParameters(q.sql, offset);
        offset += q.parameters.length;
        return `(select coalesce(json_agg(r${i}), '[]'::json) from (${shifted}) as r${i}) as "${name}"`;
      });
      return `select ${columns.join(', ')}`;
    },
  );
  return CompiledQuery.raw(text, parameters);
}

/** The texts of the read sets composed so far (store/composed-text.ts). */
const composedReads = new ComposedTexts();
