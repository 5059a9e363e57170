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

const scope = new AsyncLocalStorage<UnitScope>();

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
  return scope.getStore()?.open === true;
}

class GuardedDriver implements Driver {
  constructor(private readonly inner: Driver) {}
  init(): Promise<void> {
    return this.inner.init();
  }
  acquireConnection(): Promise<DatabaseConnection> {
    if (inUnitOfWork()) return Promise.reject(new UnitOfWorkViolation());
    return this.inner.acquireConnection();
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
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

class GuardedDialect implements Dialect {
  constructor(private readonly inner: Dialect) {}
  createDriver(): Driver {
    return new GuardedDriver(this.inner.createDriver());
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
  constructor(config: KyselyConfig) {
    super({ ...config, dialect: new GuardedDialect(config.dialect) });
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
      return scope.run(unit, () =>
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
