/**
 * The one lease queue under every background queue of the control plane (ingest, passport generation, the
 * outbox, webhook deliveries, print-job claims), in the spirit of graphile-worker: a row is due when its
 * queue says so and no live lease holds it; a claim is a guarded UPDATE: on PostgreSQL one statement whose
 * choice of rows is a FOR UPDATE SKIP LOCKED subquery, so replicas share the queue without waiting on each
 * other; on SQLite, which has one writer, a SELECT of the due ids and an UPDATE of those that are still due
 * and unleased. Every later write of the holder is fenced by its owner token, so a worker whose lease ran
 * out and was taken over writes nothing.
 *
 * Each queue keeps its own table, states and progress columns: it describes the lease columns once
 * (`LeaseColumns`) and passes what it sets on claim and on finish.
 */
import {
  CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type SqlBool,
  sql,
} from 'kysely';
import { type Database, type Db, isPostgres, shiftParameters } from '../store/index.js';

/** The queue tables, by name. */
export type QueueTable = keyof Database & string;
type Column<T extends QueueTable> = keyof Database[T] & string;

/** Where a queue table keeps its lease. */
export interface LeaseColumns<T extends QueueTable> {
  table: T;
  id: Column<T>;
  /** Until when the current claim holds the row (an ISO instant); null or past when nobody holds it. */
  lockedUntil: Column<T>;
  /** The holder's fencing token; a queue without one (the outbox) is fenced by its lease only. */
  owner?: Column<T>;
  /** Counts claims (incremented by each claim) where the queue counts them on claim. */
  attempts?: Column<T>;
  /** The claim order, oldest first (later columns break ties). */
  order: Column<T> | readonly Column<T>[];
}

/** The holder of a claimed row. */
export interface Lease {
  id: string;
  owner: string;
}

/** The lease of a claimed row was taken over by another worker: stop, and write nothing more. */
export class LeaseLost extends Error {
  constructor(
    readonly table: string,
    readonly id: string,
  ) {
    super(`the lease of ${table} ${id} was taken over`);
    this.name = 'LeaseLost';
  }
}

/** The delay before the next try after `attempts` tries, from a schedule whose last step repeats. */
export function retryDelay(schedule: readonly number[], attempts: number): number {
  if (schedule.length === 0) throw new RangeError('a retry schedule needs at least one step');
  return schedule[Math.min(Math.max(attempts, 1), schedule.length) - 1]!;
}

const iso = (ms: number) => new Date(ms).toISOString();

// The statements are the same for every queue table; Kysely types them per table, so inside this module
// they are built on an untyped view of the same handle (callers stay typed through LeaseColumns).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const untyped = (db: Db) => db as unknown as Kysely<any>;

/** The column names as plain strings, for the untyped statements. */
function names<T extends QueueTable>(q: LeaseColumns<T>) {
  return {
    table: q.table as string,
    id: q.id as string,
    lockedUntil: q.lockedUntil as string,
    owner: q.owner as string | undefined,
    attempts: q.attempts as string | undefined,
    order: (typeof q.order === 'string' ? [q.order] : [...q.order]) as string[],
  };
}

export interface ClaimOptions<T extends QueueTable> {
  now: number;
  leaseMs: number;
  /** The claim's fencing token (required when the table has an owner column). */
  owner?: string;
  /** How many rows at most (1 by default). */
  limit?: number;
  /** Which rows are due, besides having no live lease (their state, topic, next attempt time...). */
  due: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  /** What else a claim sets (a state, a start time), as column values or expressions on the row. */
  set?: (eb: ExpressionBuilder<Database, T>) => Record<string, unknown>;
  /**
   * Look with a plain read first and claim only when something is due: an idle worker polling then takes
   * no write lock (on SQLite a write lock is the whole database's).
   */
  peek?: boolean;
}

/** Claims due rows for one holder, oldest first, and returns them as the claim left them. */
export async function claim<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  opts: ClaimOptions<T>,
): Promise<Database[T][]> {
  const c = names(q);
  if (c.owner && !opts.owner) throw new TypeError(`a claim of ${c.table} needs an owner`);
  // Due and not held by a live lease; the SELECT's choice, and on SQLite the UPDATE's check again.
  const isDue = dueAndUnleased(c, opts.due, opts.now);
  const due = orderedChoice(db, c, isDue, [], opts.limit ?? 1);
  const update = claimUpdate(db, c, opts);
  let rows: Record<string, unknown>[];
  if (isPostgres(db)) {
    if (opts.peek && !(await due.executeTakeFirst())) return [];
    rows = await update.where(c.id, 'in', due.forUpdate().skipLocked()).returningAll().execute();
  } else {
    // Two statements on SQLite: the ordered choice with its LIMIT as a subquery of the UPDATE costs more
    // than the SELECT and an UPDATE by primary key together. Outside a transaction another statement on the
    // connection may come between the two, so the UPDATE checks again that each row is still due and
    // unleased: a row claimed or finished in between is not taken. Nothing due, nothing written (the
    // SELECT is the peek).
    const ids = (await due.execute()).map((r) => r[c.id] as unknown);
    if (ids.length === 0) return [];
    rows = await update.where(c.id, 'in', ids).where(isDue).returningAll().execute();
  }
  return sortByOrder(rows, c.order).map((r) => r as unknown as Database[T]);
}

/**
 * A claim's UPDATE before its WHERE: the lease, the owner (a value, or an expression such as another
 * table's column), the count and what else it sets.
 */
function claimUpdate<T extends QueueTable>(
  db: Db,
  c: ReturnType<typeof names>,
  opts: Pick<ClaimOptions<T>, 'set' | 'now' | 'leaseMs'> & { owner?: unknown },
) {
  return claimUpdateUntil(db, c, { ...opts, lockedUntil: iso(opts.now + opts.leaseMs) });
}

/** {@link claimUpdate} with the lease's end given as ISO text. */
function claimUpdateUntil<T extends QueueTable>(
  db: Db,
  c: ReturnType<typeof names>,
  opts: Pick<ClaimOptions<T>, 'set'> & { lockedUntil: string; owner?: unknown },
) {
  return untyped(db)
    .updateTable(c.table)
    .set((eb) => ({
      ...opts.set?.(eb as unknown as ExpressionBuilder<Database, T>),
      [c.lockedUntil]: opts.lockedUntil,
      ...(c.owner ? { [c.owner]: opts.owner } : {}),
      ...(c.attempts ? { [c.attempts]: eb(c.attempts, '+', 1) } : {}),
    }));
}

/** One turn of {@link claimInTurnsQuery}: which rows it may take, and the owner of each it takes, in order. */
export interface ClaimTurn<T extends QueueTable> {
  due: ClaimOptions<T>['due'];
  owners: readonly string[];
}

/**
 * On PostgreSQL, claims for several holders in turn, in one statement: the first turn takes up to as many of the
 * oldest rows its `due` names as it has owners, the next turn the oldest of its own that no earlier turn took, and
 * so on, each row for the next owner of its turn (oldest row, first owner). Each turn's choice is a FOR UPDATE SKIP
 * LOCKED subquery, so the statement is a whole claim, exactly what claiming turn by turn in one transaction gives,
 * and needs no transaction. Returns the UPDATE, returning the claimed rows in no particular order. The instant
 * (`at`) and the lease's end (`lockedUntil`) are ISO text, so a caller may prepare it (store/prepared.ts) with the
 * values of its turns as the statement's arguments.
 */
export function claimInTurnsQuery<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  opts: Pick<ClaimOptions<T>, 'set'> & { at: string; lockedUntil: string; turns: readonly ClaimTurn<T>[] },
): CompiledQuery<Database[T]> {
  const c = names(q);
  if (!c.owner) throw new TypeError(`a claim of ${c.table} by owner needs an owner column`);
  const turns = opts.turns.filter((t) => t.owners.length > 0);
  if (turns.length === 0) throw new RangeError('a claim in turns needs a turn with an owner');
  const parameters: unknown[] = [];
  const text = (query: CompiledQuery) => {
    const shifted = shiftParameters(query.sql, parameters.length);
    parameters.push(...query.parameters);
    return shifted;
  };
  const id = sql.ref(c.id);
  const order = c.order.map((col) => `"${col}"`).join(', ');
  const choices = turns.map((turn, k) => {
    let choice = orderedChoice(db, c, dueAndUnleasedAt(c, turn.due, opts.at), c.order, turn.owners.length);
    for (let j = 0; j < k; j++)
      choice = choice.where(id, 'not in', sql`(select ${id} from ${sql.table(`t${j}`)})`);
    return `t${k} as (${text(choice.forUpdate().skipLocked().compile())})`;
  });
  // Each turn's rows numbered oldest first, each matched to its turn's owner of that number.
  const columns = [...new Set([c.id, ...c.order])].map((col) => `"${col}"`).join(', ');
  const taken = turns.map((_, k) => `select ${columns}, ${k} as turn from t${k}`).join(' union all ');
  const owners = turns.flatMap((turn, k) =>
    turn.owners.map((owner, n) => {
      parameters.push(owner);
      return `($${parameters.length}::text, ${k}, ${n + 1})`;
    }),
  );
  const assigned =
    `o as (select x."${c.id}", v.owner from (select "${c.id}", turn, ` +
    `row_number() over (partition by turn order by ${order}) as n from (${taken}) as u) as x ` +
    `join (values ${owners.join(', ')}) as v(owner, turn, n) on v.turn = x.turn and v.n = x.n)`;
  const update = claimUpdateUntil(db, c, {
    set: opts.set,
    lockedUntil: opts.lockedUntil,
    owner: sql.ref('o.owner'),
  })
    .from('o')
    .whereRef(`${c.table}.${c.id}`, '=', `o.${c.id}`)
    .returningAll(c.table)
    .compile();
  return CompiledQuery.raw(
    `with ${[...choices, assigned].join(', ')} ${text(update)}`,
    parameters,
  ) as CompiledQuery<Database[T]>;
}

/**
 * The rows a claim would take next, oldest first, up to `limit`, with the columns the caller chooses by
 * (the id always): due and not held by a live lease. On PostgreSQL they are locked until the caller's
 * transaction ends (rows other claimers hold are skipped); claim the chosen with {@link claimChosen} in it.
 */
export async function chooseDue<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  opts: {
    now: number;
    limit: number;
    due: ClaimOptions<T>['due'];
    columns: readonly Column<T>[];
  },
): Promise<Record<string, unknown>[]> {
  const { now, ...rest } = opts;
  return (await dueChoiceQuery(db, q, { ...rest, at: iso(now) }).execute()) as Record<string, unknown>[];
}

/**
 * {@link chooseDue}'s statement, the instant as ISO text (`at`): for a caller that prepares it
 * (store/prepared.ts), with the values of its `due` as the statement's arguments.
 */
export function dueChoiceQuery<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  opts: { at: string; limit: number; due: ClaimOptions<T>['due']; columns: readonly Column<T>[] },
) {
  const c = names(q);
  const choice = orderedChoice(db, c, dueAndUnleasedAt(c, opts.due, opts.at), opts.columns, opts.limit);
  return isPostgres(db) ? choice.forUpdate().skipLocked() : choice;
}

/**
 * Claims rows {@link chooseDue} chose, each for its own owner (`owners`: id to fencing token), with one
 * UPDATE by id; returns the rows it claimed, in the order of the queue. In the transaction that chose
 * them they are still as chosen (locked on PostgreSQL; on SQLite nobody else writes), so all are claimed.
 * Outside a transaction the UPDATE checks again that each is still due and unleased: a row claimed or
 * finished in between is not taken. (Only there: SQLite's planner, given the tenant of the due condition
 * beside a list of ids, walks the tenant's rows on an index instead of looking each id up.)
 */
export async function claimChosen<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  opts: Omit<ClaimOptions<T>, 'owner' | 'limit' | 'peek'> & { owners: ReadonlyMap<string, string> },
): Promise<Database[T][]> {
  if (!q.owner) throw new TypeError(`a claim of ${q.table} by owner needs an owner column`);
  if (opts.owners.size === 0) return [];
  const { rows } = await db.executeQuery(
    chosenClaimQuery(db, q, {
      at: iso(opts.now),
      lockedUntil: iso(opts.now + opts.leaseMs),
      ids: [...opts.owners.keys()],
      owners: [...opts.owners.values()],
      due: opts.due,
      ...(opts.set ? { set: opts.set } : {}),
    }).compile(),
  );
  return sortedClaims(q, rows);
}

/**
 * {@link claimChosen}'s UPDATE, the instants as ISO text (`at`, and `lockedUntil`, when the lease ends) and each
 * row's owner beside its id (`owners[i]` holds `ids[i]`): for a caller that prepares it (store/prepared.ts).
 * Its rows go through {@link sortedClaims}.
 */
export function chosenClaimQuery<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  opts: Pick<ClaimOptions<T>, 'due' | 'set'> & {
    at: string;
    lockedUntil: string;
    ids: readonly string[];
    owners: readonly string[];
  },
) {
  const c = names(q);
  if (!c.owner) throw new TypeError(`a claim of ${c.table} by owner needs an owner column`);
  // Each row its own owner: `case id when ? then ? ... end`.
  const owner = sql`case ${sql.ref(c.id)} ${sql.join(
    opts.ids.map((id, i) => sql`when ${id} then ${opts.owners[i]}`),
    sql` `,
  )} end`;
  return claimUpdateUntil(db, c, { ...opts, owner })
    .where(c.id, 'in', opts.ids)
    .$if(!db.isTransaction, (w) => w.where(dueAndUnleasedAt(c, opts.due, opts.at)))
    .returningAll();
}

/** The rows a claim by {@link chosenClaimQuery} answered, in the queue's order. */
export function sortedClaims<T extends QueueTable>(
  q: LeaseColumns<T>,
  rows: readonly unknown[],
): Database[T][] {
  return sortByOrder([...rows] as Record<string, unknown>[], names(q).order).map(
    (r) => r as unknown as Database[T],
  );
}

/** The rows `due` names that no live lease holds at `now`. */
function dueAndUnleased<T extends QueueTable>(
  c: ReturnType<typeof names>,
  due: ClaimOptions<T>['due'],
  now: number,
) {
  return dueAndUnleasedAt(c, due, iso(now));
}

/** {@link dueAndUnleased} at an instant given as ISO text. */
function dueAndUnleasedAt<T extends QueueTable>(
  c: ReturnType<typeof names>,
  due: ClaimOptions<T>['due'],
  at: string,
) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (eb: ExpressionBuilder<any, string>) =>
    eb.and([
      due(eb as unknown as ExpressionBuilder<Database, T>),
      eb.or([eb(c.lockedUntil, 'is', null), eb(c.lockedUntil, '<', at)]),
    ]);
}

/** The first `limit` rows that `where` names, in the queue's order, with the id and `columns`. */
function orderedChoice(
  db: Db,
  c: ReturnType<typeof names>,
  where: ReturnType<typeof dueAndUnleased>,
  columns: readonly string[],
  limit: number,
) {
  return untyped(db)
    .selectFrom(c.table)
    .select([...new Set([c.id, ...columns])])
    .where(where)
    .$call((w) => c.order.reduce((o, col) => o.orderBy(col), w))
    .limit(limit);
}

function sortByOrder(rows: Record<string, unknown>[], order: readonly string[]): Record<string, unknown>[] {
  return rows.sort((a, b) => {
    for (const col of order) {
      const d = String(a[col]).localeCompare(String(b[col]));
      if (d !== 0) return d;
    }
    return 0;
  });
}

function fenced<T extends QueueTable>(db: Db, q: LeaseColumns<T>, lease: Lease) {
  const c = names(q);
  if (!c.owner) throw new TypeError(`${c.table} has no owner column to fence by`);
  return untyped(db).updateTable(c.table).where(c.id, '=', lease.id).where(c.owner, '=', lease.owner);
}

/**
 * Extends the lease (with what else the holder records, such as progress) while `lease.owner` holds the
 * row and `where` (a state check) holds, and returns the row as renewed. Undefined when the lease was
 * lost: the caller rolls back.
 */
export async function renew<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  lease: Lease,
  opts: {
    now: number;
    leaseMs: number;
    set?: (eb: ExpressionBuilder<Database, T>) => Record<string, unknown>;
    where?: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  },
): Promise<Database[T] | undefined> {
  const row = await fenced(db, q, lease)
    .set((eb) => ({
      ...opts.set?.(eb as unknown as ExpressionBuilder<Database, T>),
      [names(q).lockedUntil]: iso(opts.now + opts.leaseMs),
    }))
    .$if(opts.where !== undefined, (w) =>
      w.where((eb) => opts.where!(eb as unknown as ExpressionBuilder<Database, T>)),
    )
    .returningAll()
    .executeTakeFirst();
  return row as Database[T] | undefined;
}

/** Ends the claim for good (done, failed, dead-lettered): sets `set` and lets go of the lease. */
export async function finish<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  lease: Lease,
  opts: {
    set: Record<string, unknown>;
    where?: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool>;
  },
): Promise<boolean> {
  const res = await fenced(db, q, lease)
    .set({ ...opts.set, [names(q).lockedUntil]: null, [names(q).owner!]: null })
    .$if(opts.where !== undefined, (w) =>
      w.where((eb) => opts.where!(eb as unknown as ExpressionBuilder<Database, T>)),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Gives the row back, due again at `retryAt` (null: at once). A row handed back on purpose (a shutdown, a
 * time slice) is `refund`ed: that claim does not count as an attempt.
 */
export async function release<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  lease: Lease,
  opts: { retryAt: number | null; refund?: boolean },
): Promise<void> {
  const c = names(q);
  await fenced(db, q, lease)
    .set((eb) => ({
      [c.owner!]: null,
      [c.lockedUntil]: opts.retryAt === null ? null : iso(opts.retryAt),
      ...(opts.refund && c.attempts ? { [c.attempts]: eb(c.attempts, '-', 1) } : {}),
    }))
    .execute();
}

/**
 * After a fault: retries later by the schedule while attempts remain, else ends the row dead (`dead` is
 * what a dead row is set to). Returns which it was.
 */
export async function fail<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  lease: Lease,
  opts: {
    now: number;
    attempts: number;
    maxAttempts: number;
    schedule: readonly number[];
    dead: Record<string, unknown>;
  },
): Promise<'retry' | 'dead'> {
  if (opts.attempts >= opts.maxAttempts) {
    if (!(await finish(db, q, lease, { set: opts.dead }))) throw new LeaseLost(names(q).table, lease.id);
    return 'dead';
  }
  await release(db, q, lease, { retryAt: opts.now + retryDelay(opts.schedule, opts.attempts) });
  return 'retry';
}

/** Rows whose lease ran out while held (their holder died or was cut off), oldest first. */
export async function expiredLeases<T extends QueueTable>(
  db: Db,
  q: LeaseColumns<T>,
  opts: { now: number; limit: number; where?: (eb: ExpressionBuilder<Database, T>) => Expression<SqlBool> },
): Promise<string[]> {
  const c = names(q);
  const rows = await untyped(db)
    .selectFrom(c.table)
    .select(c.id)
    .where(c.lockedUntil, '<', iso(opts.now))
    .$if(c.owner !== undefined, (w) => w.where(c.owner!, 'is not', null))
    .$if(opts.where !== undefined, (w) =>
      w.where((eb) => opts.where!(eb as unknown as ExpressionBuilder<Database, T>)),
    )
    .$call((w) => c.order.reduce((o, col) => o.orderBy(col), w))
    .limit(opts.limit)
    .execute();
  return rows.map((r) => String(r[c.id]));
}
