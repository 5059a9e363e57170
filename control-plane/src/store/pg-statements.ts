/**
 * PostgreSQL parses, analyses and plans every statement sent without a name, each time it is sent. The print
 * loop's statements are long (a claim for four printers is about 6 KB of SQL, a results batch's reads and writes
 * 3 and 8 KB) and come back with the same text call after call: planning a claim took PostgreSQL 1.5-2 ms, about
 * four times running it (docs/benchmarks.md, round 18).
 *
 * A query or write whose text was sent {@link NAMED_AFTER} times is sent as a named statement instead: each pooled
 * connection parses it once and keeps it, and after five runs PostgreSQL may keep one generic plan for it
 * (`plan_cache_mode = auto`: when the generic plan is not costlier than the custom ones). A name is the text's
 * hash, so one name never stands for two texts. Connections never forget a statement, so the texts named are
 * bounded ({@link MAX_NAMED} per process, each at most {@link MAX_NAMED_LENGTH} characters); a text past the
 * bounds is sent as before.
 *
 * A statement kept across a schema change that changes the columns it answers (a `select *` after another
 * replica's migration added a column) is refused by PostgreSQL (SQLSTATE 0A000, "cached plan must not change
 * result type"), before it runs. Its text is then never named again in this process, and a statement outside a
 * transaction is sent again unnamed at once; in a transaction the error ends the transaction, as any error does.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { BoundedMap } from '@dpp/shared';

/** Times a text is sent unnamed before it is named: a text sent once or twice is not worth a connection's memory. */
export const NAMED_AFTER = 3;
/**
 * Distinct texts named per process. Each connection keeps those it ran: on the benchmark's floor 48-63 statements
 * took about 3.6 MB of a backend's memory.
 */
export const MAX_NAMED = 256;
/**
 * The longest text named, in characters: the print loop's are at most about 9,000 (a results batch's write set for
 * four jobs); a bulk write of a thousand rows, tens of thousands of parameters, is neither counted nor kept.
 */
export const MAX_NAMED_LENGTH = 16_384;
/** Texts counted toward {@link NAMED_AFTER} at once (the least recently seen are forgotten first). */
const COUNTED = 512;
/** Only statements that read or write rows are named (never BEGIN, SAVEPOINT, SET, DDL...). */
const NAMEABLE = /^\s*(select|insert|update|delete|with)\b/i;
/**
 * The SQLSTATE of "cached plan must not change result type" (a kept statement outlived a change of its columns):
 * feature_not_supported, which other refusals share. Those fail the same way when sent again unnamed, so the code
 * alone decides (the message may be in the server's language).
 */
const STALE_PLAN = '0A000';

/** The name a text is sent under: its hash. */
export function statementName(sql: string): string {
  return `dpp_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`;
}

/** Which texts are sent named: queries and writes sent often, up to the bound. */
export class StatementNames {
  private readonly named = new Map<string, string>();
  private readonly seen = new BoundedMap<string, number>(COUNTED);
  private readonly refused = new Set<string>();

  constructor(
    private readonly after = NAMED_AFTER,
    private readonly max = MAX_NAMED,
  ) {}

  /** The name to send this text under, or undefined to send it unnamed; counts the text as sent. */
  nameFor(sql: string): string | undefined {
    const name = this.named.get(sql);
    if (name !== undefined) return name;
    if (this.named.size >= this.max || sql.length > MAX_NAMED_LENGTH || !NAMEABLE.test(sql)) return undefined;
    if (this.refused.has(sql)) return undefined;
    const times = (this.seen.get(sql) ?? 0) + 1;
    if (times < this.after) {
      this.seen.set(sql, times);
      return undefined;
    }
    this.seen.delete(sql);
    const hashed = statementName(sql);
    this.named.set(sql, hashed);
    return hashed;
  }

  /** Never names this text again (its kept statement no longer fits the schema). */
  refuse(sql: string): void {
    this.named.delete(sql);
    if (this.refused.size < this.max) this.refused.add(sql);
  }

  /** How many texts are named now. */
  get size(): number {
    return this.named.size;
  }
}

type QueryFn = (...args: unknown[]) => unknown;

const isStalePlan = (err: unknown) => (err as { code?: unknown } | null)?.code === STALE_PLAN;

/**
 * Sends the pool's often repeated texts as named statements: every client the pool connects sends a
 * `query(text, values)` (how Kysely's driver sends each statement) under the text's name once
 * {@link StatementNames} names it. Any other form of call (a config object, a callback) is passed on as it came.
 */
export function nameRepeatedStatements(pool: pg.Pool, names: StatementNames): void {
  pool.on('connect', (client) => {
    // The class's own query, looked up at each call (so what wraps the class later, as a benchmark's counter does,
    // still sees every statement).
    const query: QueryFn = (...args) =>
      (Object.getPrototypeOf(client) as { query: QueryFn }).query.apply(client, args);
    (client as unknown as { query: QueryFn }).query = (...args: unknown[]) => {
      const [text, values] = args;
      if (typeof text !== 'string' || args.length > 2 || !(values === undefined || Array.isArray(values))) {
        return query(...args);
      }
      const name = names.nameFor(text);
      if (name === undefined) return query(...args);
      return (query({ name, text, values }) as Promise<unknown>).catch((err: unknown) => {
        if (!isStalePlan(err)) throw err;
        names.refuse(text);
        // It did not run: outside a transaction it is sent again unnamed, as it would have been.
        if (client.getTransactionStatus() !== 'I') throw err;
        return query(...args);
      });
    };
  });
}
