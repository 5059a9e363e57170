/** The outbox rows and the guarded statements that move them (one statement per transition). */
import type { ResultState } from '@dpp/shared';
import type { AgentDatabase } from '../store/index.js';

export type OutboxState = 'pending' | 'delivered' | 'rejected' | 'skipped';

export interface OutboxRow {
  id: number;
  job_ref: string;
  attempt_id: string;
  status: ResultState;
  body: string;
  idempotency_key: string;
  state: OutboxState;
  tries: number;
  next_try_at: number;
  http_status: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  settled_at: string | null;
}

export function insertRow(
  db: AgentDatabase,
  r: Pick<OutboxRow, 'job_ref' | 'attempt_id' | 'status' | 'body' | 'idempotency_key' | 'created_at'>,
): OutboxRow {
  return db
    .prepare(
      `insert into outbox (job_ref, attempt_id, status, body, idempotency_key, created_at)
       values (@job_ref, @attempt_id, @status, @body, @idempotency_key, @created_at) returning *`,
    )
    .get(r) as OutboxRow;
}

export function getRow(db: AgentDatabase, id: number): OutboxRow | undefined {
  return db.prepare('select * from outbox where id = ?').get(id) as OutboxRow | undefined;
}

/** The oldest pending row of every job: only these may be sent (strict order per job). */
export function pendingHeads(db: AgentDatabase): OutboxRow[] {
  return db
    .prepare(
      `select o.* from outbox o
       where o.state = 'pending'
         and o.id = (select min(p.id) from outbox p where p.job_ref = o.job_ref and p.state = 'pending')
       order by o.id`,
    )
    .all() as OutboxRow[];
}

export function markDelivered(db: AgentDatabase, id: number, httpStatus: number, at: string): boolean {
  return (
    db
      .prepare(
        `update outbox set state = 'delivered', http_status = ?, settled_at = ?, tries = tries + 1,
         error_code = null, error_message = null where id = ? and state = 'pending'`,
      )
      .run(httpStatus, at, id).changes === 1
  );
}

export function markRetry(
  db: AgentDatabase,
  id: number,
  nextTryAt: number,
  code: string,
  message: string,
): boolean {
  return (
    db
      .prepare(
        `update outbox set tries = tries + 1, next_try_at = ?, error_code = ?, error_message = ?
         where id = ? and state = 'pending'`,
      )
      .run(nextTryAt, code, message.slice(0, 1000), id).changes === 1
  );
}

/**
 * A final refusal: the row is recorded as rejected, and the later rows of the same attempt that move the
 * job forward are skipped (they cannot apply once an earlier step was refused). A later FAILED row of the
 * attempt is still sent: it may end the attempt sooner than the lease would.
 */
export function markRejected(
  db: AgentDatabase,
  row: OutboxRow,
  r: { httpStatus: number | null; code: string; message: string; at: string },
): number[] {
  return db.transaction(() => {
    const moved = db
      .prepare(
        `update outbox set state = 'rejected', tries = tries + 1, http_status = ?, error_code = ?, error_message = ?,
         settled_at = ? where id = ? and state = 'pending'`,
      )
      .run(r.httpStatus, r.code, r.message.slice(0, 1000), r.at, row.id).changes;
    if (moved !== 1) return [];
    const skipped = db
      .prepare(
        `update outbox set state = 'skipped', error_code = 'PREDECESSOR_REJECTED', settled_at = ?
         where attempt_id = ? and id > ? and state = 'pending' and status != 'FAILED' returning id`,
      )
      .all(r.at, row.attempt_id, row.id) as Array<{ id: number }>;
    return skipped.map((s) => s.id);
  })();
}

export function countByState(db: AgentDatabase): Record<OutboxState, number> {
  const rows = db.prepare('select state, count(*) as n from outbox group by state').all() as Array<{
    state: OutboxState;
    n: number;
  }>;
  const out: Record<OutboxState, number> = { pending: 0, delivered: 0, rejected: 0, skipped: 0 };
  for (const r of rows) out[r.state] = r.n;
  return out;
}

export function rowsOfJob(db: AgentDatabase, jobRef: string): OutboxRow[] {
  return db.prepare('select * from outbox where job_ref = ? order by id').all(jobRef) as OutboxRow[];
}

/** Keeps the newest `keep` settled rows; pending rows are never pruned. */
export function pruneSettled(db: AgentDatabase, keep: number): number {
  return db
    .prepare(
      `delete from outbox where state != 'pending' and id < coalesce(
         (select id from outbox where state != 'pending' order by id desc limit 1 offset ?), -1)`,
    )
    .run(Math.max(0, keep - 1)).changes;
}
