/**
 * The agent's one SQLite file (better-sqlite3): the durable result outbox and the local job journal.
 * WAL with `synchronous = FULL`, so a row the outbox has accepted survives a crash or a power cut.
 * Migrations are numbered, forward-only, and tracked in `user_version`.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type AgentDatabase = Database.Database;

export const DATABASE_FILE = 'agent.sqlite';

const MIGRATIONS: readonly string[] = [
  // 1: the outbox and the job journal
  `
  create table outbox (
    id integer primary key autoincrement,
    job_ref text not null,
    attempt_id text not null,
    status text not null,
    body text not null,
    idempotency_key text not null unique,
    state text not null default 'pending' check (state in ('pending', 'delivered', 'rejected', 'skipped')),
    tries integer not null default 0,
    next_try_at integer not null default 0,
    http_status integer,
    error_code text,
    error_message text,
    created_at text not null,
    settled_at text
  );
  create index outbox_pending on outbox (state, job_ref, id);
  create index outbox_attempt on outbox (attempt_id, id);

  create table jobs (
    attempt_id text primary key,
    job_ref text not null,
    printer text not null,
    step text not null,
    gtin text not null,
    serial text not null,
    digital_link text not null,
    sgtin96_epc text not null,
    envelope_jti text not null,
    claims text not null,
    evidence text not null default '{}',
    preview blob,
    error text,
    claimed_at text not null,
    updated_at text not null,
    finished_at text
  );
  create index jobs_ref on jobs (job_ref, claimed_at);
  create index jobs_updated on jobs (updated_at);
  `,
];

export function openAgentDatabase(file: string): AgentDatabase {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  const version = db.pragma('user_version', { simple: true }) as number;
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return db;
}
