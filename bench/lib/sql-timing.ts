/**
 * Where SQLite's time goes, statement by statement, for the control plane running in this process: the
 * `run`, `all` and `get` of better-sqlite3's statements are timed while the load runs, and their time is
 * summed by what the statement writes or reads (the idempotency record, audit rows, the outbox, commits...).
 * On PostgreSQL, where each statement is a round trip, the statements are counted the same way.
 * Benchmark-only: each wraps its driver's prototype in this process and puts it back on `stop()`.
 */
import SQLite from 'better-sqlite3';
import pg from 'pg';

type Method = 'run' | 'all' | 'get';

/** What a statement is for, from its text. */
const GROUPS: [string, RegExp][] = [
  // PostgreSQL's sets (store/write-set.ts, store/read-set.ts): one statement of many writes, or of many reads.
  ['write set (several writes in one statement)', /^with w0 as \(/i],
  ['read set (several reads in one statement)', /^select \(select coalesce\(json_agg\(r0\)/i],
  ['commits (and begin)', /^(commit|begin|rollback)$/i],
  ['savepoints (one per batched result)', /^(savepoint|release|rollback to)/i],
  ['idempotency record', /"idempotency_keys"/],
  ['audit rows', /"audit_log"/],
  ['outbox rows and dispatcher', /"outbox"/],
  [
    'claim (queue UPDATE and, on SQLite, its choice)',
    /^update "print_jobs" set "state" = (\?|\$1), "device_id"|^select "job_ref" from "print_jobs" where \(+"tenant_id"/,
  ],
  ['print job reads and guarded UPDATEs', /"print_jobs"/],
  ['evidence rows', /"print_evidence"/],
  ['attempt rows', /"print_attempts"/],
  [
    'seal (receipt, EPCIS, metadata.print, events)',
    /"(seal_receipts|epcis_events|epcis_event_epcs|carrier_serials|events)"|\bcarrier_serials\b/,
  ],
  ['authentication (devices, tenants, keys)', /"(devices|tenants|api_keys|oauth_assertions)"/],
  ['passport version of a claim', /"(passports|passport_versions)"/],
  ['transparency log', /"(log_nodes|log_tree_heads|log_state)"|leaf_index/],
];

/** The group of a statement's text. */
const groupOf = (source: string) => GROUPS.find(([, re]) => re.test(source))?.[0] ?? 'other statements';

export interface SqlShare {
  name: string;
  ms: number;
  statements: number;
}

export class SqlTimer {
  private readonly proto = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1')) as Record<
    Method,
    (...a: unknown[]) => unknown
  >;
  private readonly originals = new Map<Method, (...a: unknown[]) => unknown>();
  private readonly bySource = new Map<string, { ms: number; n: number }>();
  /** Each COMMIT's duration: a long one holds the one connection (and the thread) while every request waits. */
  private readonly commitMs: number[] = [];

  start(): void {
    const bySource = this.bySource;
    const commitMs = this.commitMs;
    for (const m of ['run', 'all', 'get'] as const) {
      const original = this.proto[m];
      this.originals.set(m, original);
      this.proto[m] = function (this: { source: string }, ...a: unknown[]) {
        const t0 = performance.now();
        try {
          return original.apply(this, a);
        } finally {
          const ms = performance.now() - t0;
          if (this.source === 'commit') commitMs.push(ms);
          const e = bySource.get(this.source) ?? { ms: 0, n: 0 };
          e.ms += ms;
          e.n += 1;
          bySource.set(this.source, e);
        }
      };
    }
  }

  /** Puts the driver back and sums the time by group, largest first. */
  stop(): SqlShare[] {
    for (const [m, f] of this.originals) this.proto[m] = f;
    const out = new Map<string, SqlShare>();
    for (const [source, { ms, n }] of this.bySource) {
      const name = groupOf(source);
      const s = out.get(name) ?? { name, ms: 0, statements: 0 };
      s.ms += ms;
      s.statements += n;
      out.set(name, s);
    }
    return [...out.values()].sort((a, b) => b.ms - a.ms);
  }

  /** Each COMMIT's duration in ms, shortest first. */
  commitDurations(): number[] {
    return [...this.commitMs].sort((x, y) => x - y);
  }
}

/** PostgreSQL statements of the control plane in this process, counted by what they are for. */
export class PgStatementCounter {
  private readonly proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  private original: ((...a: unknown[]) => unknown) | undefined;
  private readonly byGroup = new Map<string, number>();
  /** Statements sent under a name (store/pg-statements.ts: kept by the connection, planned once). */
  private readonly sent = { named: 0 };
  /** Per group, the statement with the most parameters seen, and the client it ran on (for its plan). */
  private readonly samples = new Map<string, { text: string; values: unknown[]; client: unknown }>();

  start(): void {
    const original = this.proto.query;
    this.original = original;
    const byGroup = this.byGroup;
    const samples = this.samples;
    const sent = this.sent;
    this.proto.query = function (this: unknown, ...a: unknown[]) {
      const q = a[0] as string | { text?: unknown; values?: unknown; name?: unknown } | undefined;
      if (typeof q === 'object' && typeof q?.name === 'string') sent.named++;
      const text = typeof q === 'string' ? q : q?.text;
      const values = typeof q === 'string' ? a[1] : q?.values;
      if (typeof text === 'string') {
        const name = groupOf(text.trim());
        byGroup.set(name, (byGroup.get(name) ?? 0) + 1);
        if (Array.isArray(values) && values.length > (samples.get(name)?.values.length ?? -1))
          samples.set(name, { text, values, client: this });
      }
      return original.apply(this, a);
    };
  }

  /** Puts the driver back; the counts by group, largest first. */
  stop(): { name: string; statements: number }[] {
    if (this.original) this.proto.query = this.original;
    return this.counts();
  }

  /** How many of the statements counted were sent under a name. */
  namedStatements(): number {
    return this.sent.named;
  }

  private counts(): { name: string; statements: number }[] {
    return [...this.byGroup]
      .map(([name, statements]) => ({ name, statements }))
      .sort((a, b) => b.statements - a.statements);
  }

  /**
   * After {@link stop}, while the control plane's pool is still open: how long PostgreSQL takes to plan the
   * largest statement of each of the `top` most frequent groups (`EXPLAIN (SUMMARY)`, planned and not run),
   * which it does again for every statement sent without a prepared plan.
   */
  async planning(
    top: number,
  ): Promise<{ name: string; params: number; chars: number; planningMs: number }[]> {
    const query = this.original!;
    const out = [];
    for (const { name } of this.counts().slice(0, top)) {
      const sample = this.samples.get(name);
      if (!sample || !/^\s*(select|insert|update|delete|with)\b/i.test(sample.text)) continue;
      const { rows } = (await query.call(
        sample.client,
        `explain (summary) ${sample.text}`,
        sample.values,
      )) as {
        rows: Record<string, string>[];
      };
      const line = rows.map((r) => Object.values(r)[0]!).find((l) => l.startsWith('Planning Time'));
      const planningMs = Number(/([\d.]+) ms/.exec(line ?? '')?.[1] ?? NaN);
      out.push({ name, params: sample.values.length, chars: sample.text.length, planningMs });
    }
    return out;
  }
}
