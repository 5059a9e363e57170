/**
 * One rule for transactions: inside a unit of work (`db.transaction().execute(fn)`) only the transaction
 * handle may reach the database. On SQLite there is one connection, held by the transaction, so a query on
 * the root handle from inside `fn` waits for it forever (the process wedges: no request, no readiness, no
 * shutdown). On PostgreSQL it takes a second pooled connection, which reads outside the transaction and
 * can exhaust the pool the same way under load.
 *
 * The rule is enforced, not just documented: the root handle's driver refuses to hand out a connection
 * while the calling async context is inside an open unit of work, and throws {@link UnitOfWorkViolation}
 * at once. The async context is tracked with `AsyncLocalStorage`, so concurrent requests waiting their
 * turn for the connection are not affected; only code called from the unit of work itself is.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  Kysely,
  type KyselyConfig,
  type QueryCompiler,
  type TransactionBuilder,
  type TransactionSettings,
} from 'kysely';

interface UnitScope {
  /** True from the moment the transaction has begun until the callback settles. */
  open: boolean;
}

/**
 * What the calling async context is in: a unit of work, the first lane ({@link firstInLine}), or both. One
 * `AsyncLocalStorage` for both: each instance copies its store onto every promise made anywhere (two were 2-3 %
 * of a busy print floor's thread).
 */
interface Context {
  unit?: UnitScope;
  firstLane?: true;
}

const context = new AsyncLocalStorage<Context>();

/** Thrown when code inside a unit of work asks the root handle for a connection. */
export class UnitOfWorkViolation extends Error {
  override readonly name = 'UnitOfWorkViolation';
  readonly code = 'UNIT_OF_WORK_VIOLATION';
  constructor() {
    super(
      'the root database handle was used inside a unit of work; pass the transaction handle instead ' +
        '(on SQLite this query would wait forever for the connection the transaction holds)',
    );
  }
}

/** Whether the caller runs inside an open unit of work (for caches that must not refresh there). */
export function inUnitOfWork(): boolean {
  return context.getStore()?.unit?.open === true;
}

/**
 * A first-come, first-served lock with a lane for work that others wait on, held by one holder (SQLite's
 * connection) or by up to `capacity` at once (the connections of a PostgreSQL pool). Kysely's SQLite driver guards
 * its one connection with a mutex that wakes every waiter on each release (they race, one wins, the rest
 * wait again): with 50 devices' requests queued, every statement woke 50 promises, and a request could lose
 * the race again and again. Here each release hands the connection to one waiter, in the order they asked;
 * waiters in the first lane ({@link firstInLine}) go before the others, except that every
 * `FAIR_EVERY`-th hand-over goes to the other lane when it waits, so neither lane starves.
 *
 * A hand-over resolves a promise, so the next holder runs in the same drain of the microtask queue, and so on
 * while waiters are queued: with SQLite's statements synchronous, a queue of transactions ran back to back
 * without a turn of the event loop, and no socket was read meanwhile (a claim arriving then waited 100-250 ms
 * to be read). Once the hand-overs have run `turnMs` without such a turn, the next one waits for one
 * (`setImmediate`): the requests that arrived meanwhile are read, and a claim among them goes first.
 */
export class FifoLock {
  private holders = 0;
  private readonly first: (() => void)[] = [];
  private readonly rest: (() => void)[] = [];
  private handedToFirst = 0;
  /** When the current run of hand-overs without a turn of the event loop began. */
  private runSince = 0;
  static readonly FAIR_EVERY = 4;

  constructor(
    private readonly turnMs = 5,
    private readonly now: () => number = () => performance.now(),
    private readonly capacity = 1,
  ) {}

  /** Takes the lock when it is free (then nobody waits for it); false when it is held. */
  tryAcquire(): boolean {
    if (this.holders >= this.capacity) return false;
    this.take();
    return true;
  }

  acquire(firstLane = false): Promise<void> {
    if (this.holders < this.capacity) {
      this.take();
      return Promise.resolve();
    }
    return new Promise((resolve) => (firstLane ? this.first : this.rest).push(resolve));
  }

  release(): void {
    if (this.first.length + this.rest.length === 0) {
      this.holders -= 1;
      return;
    }
    if (this.now() - this.runSince < this.turnMs) {
      this.handOver();
      return;
    }
    // Still held, so nobody takes it out of turn; the next holder is chosen after the turn.
    setImmediate(() => {
      this.runSince = this.now();
      this.handOver();
    });
  }

  /** Requests waiting for the connection. */
  get waiting(): number {
    return this.first.length + this.rest.length;
  }

  private take(): void {
    this.holders += 1;
    this.runSince = this.now();
  }

  private handOver(): void {
    const takeFirst =
      this.first.length > 0 && (this.rest.length === 0 || this.handedToFirst < FifoLock.FAIR_EVERY - 1);
    const next = takeFirst ? this.first.shift() : this.rest.shift();
    this.handedToFirst = takeFirst ? this.handedToFirst + 1 : 0;
    if (next) next();
    else this.holders -= 1;
  }
}

/** Whether the calling async context is in the first lane. */
const inFirstLane = () => context.getStore()?.firstLane === true;

/**
 * Runs `fn` (and everything it starts) in the first lane: its queries are served before others that wait
 * for SQLite's one connection, or for a connection of PostgreSQL's pool when all are taken. For work
 * something waits on, such as a claim an idle printer waits for.
 */
export function firstInLine<T>(fn: () => T): T {
  const unit = context.getStore()?.unit;
  return context.run(unit ? { unit, firstLane: true } : { firstLane: true }, fn);
}

class GuardedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    /**
     * One connection (SQLite), or a pool's (PostgreSQL): handed out in order by this lock, first lane first,
     * so the inner mutex, or the pool's own queue of waiters (first come, first served), never contends.
     */
    private readonly lock: FifoLock | null,
  ) {}
  init(): Promise<void> {
    return this.inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    if (inUnitOfWork()) throw new UnitOfWorkViolation();
    if (!this.lock) return this.inner.acquireConnection();
    await this.lock.acquire(inFirstLane());
    try {
      return await this.inner.acquireConnection();
    } catch (err) {
      this.lock.release();
      throw err;
    }
  }
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection(connection);
    } finally {
      this.lock?.release();
    }
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

class GuardedDialect implements Dialect {
  constructor(
    private readonly inner: Dialect,
    private readonly lock: FifoLock | null,
  ) {}
  createDriver(): Driver {
    return new GuardedDriver(this.inner.createDriver(), this.lock);
  }
  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }
  createAdapter(): DialectAdapter {
    return this.inner.createAdapter();
  }
  createIntrospector(db: Parameters<Dialect['createIntrospector']>[0]): DatabaseIntrospector {
    return this.inner.createIntrospector(db);
  }
}

/**
 * A Kysely whose units of work are guarded: `transaction().execute(fn)` runs `fn` in a scope where the
 * root handle refuses to give out connections. Everything else is plain Kysely.
 */
export class GuardedKysely<DB> extends Kysely<DB> {
  private readonly lock: FifoLock | null;

  /**
   * `singleConnection`: the dialect has one connection (SQLite), handed out first come, first served.
   * `poolSize`: the dialect's pool has this many connections (PostgreSQL); when all are taken, the next one
   * goes to the first lane's waiters first ({@link firstInLine}).
   */
  constructor(config: KyselyConfig & { singleConnection?: boolean; poolSize?: number }) {
    const { singleConnection, poolSize, ...rest } = config;
    const lock = singleConnection ? new FifoLock() : null;
    // A pool's hand-overs come from its sockets' callbacks, not from a run of synchronous statements: no turn
    // of the event loop to wait for between them.
    const pool = !lock && poolSize ? new FifoLock(Infinity, undefined, poolSize) : null;
    super({ ...rest, dialect: new GuardedDialect(config.dialect, lock ?? pool) });
    this.lock = lock;
  }

  /**
   * Runs `read`, synchronous work straight on the driver (store/direct-reads.ts), when a query of this
   * handle could run: refused inside a unit of work; with one connection, only while no query holds it (at
   * once when it is free, else in the caller's turn), so it never runs beside a transaction on SQLite's one
   * connection, where it would see that transaction's uncommitted rows.
   */
  withConnection<T>(read: () => T): Promise<T> {
    if (inUnitOfWork()) return Promise.reject(new UnitOfWorkViolation());
    const lock = this.lock;
    if (!lock || lock.tryAcquire()) {
      try {
        return Promise.resolve(read());
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      } finally {
        lock?.release();
      }
    }
    return lock.acquire(inFirstLane()).then(() => {
      try {
        return read();
      } finally {
        lock.release();
      }
    });
  }

  /**
   * Runs `fn` while no query of this handle runs: with one connection, it is held for `fn` (asked for first
   * in line, as `fn` is short and the others wait on it); with a pool, `fn` runs at once. For work beside
   * the connection that needs the database still, such as SQLite's checkpointer finishing a pass.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const lock = this.lock;
    if (!lock) return fn();
    await lock.acquire(true);
    try {
      return await fn();
    } finally {
      lock.release();
    }
  }

  override transaction(): TransactionBuilder<DB> {
    const builder = super.transaction();
    const execute = builder.execute.bind(builder) as (
      fn: (trx: unknown) => Promise<unknown>,
    ) => Promise<unknown>;
    const guarded = (fn: (trx: unknown) => Promise<unknown>): Promise<unknown> => {
      // A transaction begun on the root handle from inside a unit is the same mistake (and on SQLite the
      // same wait forever).
      if (inUnitOfWork()) return Promise.reject(new UnitOfWorkViolation());
      const unit: UnitScope = { open: false };
      // The transaction's own connection is acquired before `open` is set; from then on the scope is shut
      // to the root handle until `fn` settles (work `fn` leaves running afterwards is not in the unit).
      return context.run(inFirstLane() ? { unit, firstLane: true } : { unit }, () =>
        execute(async (trx) => {
          unit.open = true;
          try {
            return await fn(trx);
          } finally {
            unit.open = false;
          }
        }),
      );
    };
    Object.assign(builder, { execute: guarded });
    return builder;
  }
}
