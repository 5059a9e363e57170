/**
 * The transparency log of seal receipts (docs/label-proof.md): a sequencer appends every new receipt as a
 * leaf of an RFC 9162 Merkle tree and signs a tree head; proofs of inclusion and consistency are read from
 * the stored perfect subtrees. One log per control plane, shared by the replicas: the sequencer appends
 * under the lock of the log's row, and signs no head whose tree does not extend the previous one.
 */
import { TREE_HEAD_TYPE, type TreeHeadPayload, canonicalJsonBytes } from '@dpp/shared';
import { sql } from 'kysely';
import type { Logger } from '../logging/logger.js';
import type { Keyring } from '../signing/index.js';
import { type Db, type LogTreeHeadTable, isPostgres, uuidv7 } from '../store/index.js';
import { type PassResult, PollingLoop } from '../workers/index.js';
import {
  type Hash,
  type NodeRef,
  type StoredNode,
  MissingNodeError,
  appendNodes,
  consistencyProof,
  inclusionProof,
  leafHash,
  readingNodes,
  treeRoot,
} from './tree.js';

export interface TransparencyLogDeps {
  db: Db;
  keyring: Pick<Keyring, 'signCompact'>;
  /** The control plane's public base URL: the heads' `iss`, and the log's URL under it. */
  issuer: string;
  now: () => number;
  /** A head is signed at least this often while the tree does not grow, so a stale head shows. */
  maxHeadAgeMs: number;
  log: Logger;
}

/** Receipts given their leaf index by one UPDATE (two parameters each). */
const LEAF_INDEX_CHUNK = 500;

/** The tree in the store does not extend the last head the log signed: it was rewritten. */
export class LogIntegrityError extends Error {
  override readonly name = 'LogIntegrityError';
}

/** The log's URL, as its tree heads name it. */
export const logUrl = (issuer: string): string => `${issuer}/api/v2/public/log`;

/** The leaf of a seal receipt: its compact JWS as ASCII bytes. */
export const receiptLeaf = (receipt: string): Hash => leafHash(Buffer.from(receipt, 'ascii'));

const hex = (hashes: Hash[]): string[] => hashes.map((h) => h.toString('hex'));

/** Loads the nodes `refs` names (a proof needs a few dozen at most). */
function nodeFetcher(db: Db): (refs: NodeRef[]) => Promise<StoredNode[]> {
  return async (refs) => {
    const found: StoredNode[] = [];
    for (let i = 0; i < refs.length; i += 100) {
      const chunk = refs.slice(i, i + 100);
      const rows = await db
        .selectFrom('log_nodes')
        .select(['level', 'node_index', 'hash'])
        .where((eb) =>
          eb.or(chunk.map((r) => eb.and([eb('level', '=', r.level), eb('node_index', '=', r.index)]))),
        )
        .execute();
      found.push(
        ...rows.map((r) => ({ level: r.level, index: r.node_index, hash: Buffer.from(r.hash, 'hex') })),
      );
    }
    return found;
  };
}

export class TransparencyLog {
  constructor(private readonly deps: TransparencyLogDeps) {}

  /** The newest signed tree head, or undefined before the sequencer's first pass. */
  async latestHead(db: Db = this.deps.db): Promise<LogTreeHeadTable | undefined> {
    return db
      .selectFrom('log_tree_heads')
      .selectAll()
      .orderBy('tree_size', 'desc')
      .orderBy('signed_at', 'desc')
      .limit(1)
      .executeTakeFirst();
  }

  /** The audit path of leaf `leafIndex` in the tree of `treeSize` leaves, hex, from the leaf up. */
  async inclusion(leafIndex: number, treeSize: number): Promise<string[]> {
    return hex(
      await readingNodes(nodeFetcher(this.deps.db), (read) => inclusionProof(leafIndex, treeSize, read)),
    );
  }

  /** The consistency proof between two tree sizes, hex. */
  async consistency(first: number, second: number): Promise<string[]> {
    return hex(
      await readingNodes(nodeFetcher(this.deps.db), (read) => consistencyProof(first, second, read)),
    );
  }

  /**
   * One pass of the sequencer: appends up to `batch` receipts not yet in the log, in seal order, and signs
   * the new head (or a fresh head of the same tree once the last one is `maxHeadAgeMs` old).
   */
  async sequence(batch = 500): Promise<PassResult> {
    const { db, now, maxHeadAgeMs } = this.deps;
    // Most passes find nothing to do: they say so without a write transaction (on SQLite, a turn of the one
    // writer connection every request waits for).
    const fresh = (head: { signed_at: string } | undefined) =>
      head !== undefined && now() - Date.parse(head.signed_at) < maxHeadAgeMs;
    const waiting = await db
      .selectFrom('seal_receipts')
      .select('job_ref')
      .where('leaf_index', 'is', null)
      .limit(1)
      .executeTakeFirst();
    if (!waiting && fresh(await this.latestHead())) return 'idle';
    return db.transaction().execute(async (trx) => {
      const state = trx.selectFrom('transparency_log').select('tree_size').where('id', '=', 'log');
      const { tree_size: size } = await (
        isPostgres(trx) ? state.forUpdate() : state
      ).executeTakeFirstOrThrow();
      const pending = await trx
        .selectFrom('seal_receipts')
        .select(['job_ref', 'receipt'])
        .where('leaf_index', 'is', null)
        .orderBy('sealed_at')
        .orderBy('job_ref')
        .limit(batch)
        .execute();
      const last = await this.latestHead(trx);
      if (pending.length === 0 && fresh(last)) return 'idle';

      const leaves = pending.map((p) => receiptLeaf(p.receipt));
      const grown = size + leaves.length;
      const rewritten = (why: string) =>
        new LogIntegrityError(
          `the stored log does not extend its last signed head (size ${last!.tree_size}, root ${last!.root_hash}): ` +
            `${why}; no new head is signed until it is restored`,
        );
      if (last && last.tree_size > size) throw rewritten(`it has ${size} leaves`);
      let computed;
      try {
        computed = await readingNodes(nodeFetcher(trx), (read) => {
          const nodes = appendNodes(size, leaves, read);
          const fresh = new Map(nodes.map((n) => [`${n.level}/${n.index}`, n.hash]));
          const after = (level: number, index: number) =>
            fresh.get(`${level}/${index}`) ?? read(level, index);
          return {
            nodes,
            lastRoot: last ? treeRoot(last.tree_size, read) : undefined,
            root: treeRoot(grown, after),
          };
        });
      } catch (err) {
        if (err instanceof MissingNodeError && last) throw rewritten(err.message);
        throw err;
      }
      const { nodes, lastRoot, root } = computed;
      if (last && lastRoot!.toString('hex') !== last.root_hash) {
        throw rewritten(`its first ${last.tree_size} leaves now hash to ${lastRoot!.toString('hex')}`);
      }
      for (let i = 0; i < nodes.length; i += 500) {
        await trx
          .insertInto('log_nodes')
          .values(
            nodes
              .slice(i, i + 500)
              .map((n) => ({ level: n.level, node_index: n.index, hash: n.hash.toString('hex') })),
          )
          .execute();
      }
      // Each receipt's leaf index, one statement per chunk of receipts instead of one per receipt (the
      // indexes are ours, integers, so they are written as literals: a parameter would be untyped text).
      for (let i = 0; i < pending.length; i += LEAF_INDEX_CHUNK) {
        const chunk = pending.slice(i, i + LEAF_INDEX_CHUNK);
        const leafIndex = sql<number>`case job_ref ${sql.join(
          chunk.map((p, k) => sql`when ${p.job_ref} then ${sql.lit(size + i + k)}`),
          sql` `,
        )} end`;
        const updated = await trx
          .updateTable('seal_receipts')
          .set({ leaf_index: leafIndex })
          .where(
            'job_ref',
            'in',
            chunk.map((p) => p.job_ref),
          )
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) !== chunk.length) throw new Error('a pending receipt vanished');
      }
      await trx.updateTable('transparency_log').set({ tree_size: grown }).where('id', '=', 'log').execute();
      const timestamp = new Date(now()).toISOString();
      const payload: TreeHeadPayload = {
        iss: this.deps.issuer,
        log: logUrl(this.deps.issuer),
        treeSize: grown,
        rootHash: root.toString('hex'),
        timestamp,
      };
      const head = await this.deps.keyring.signCompact(canonicalJsonBytes(payload), TREE_HEAD_TYPE);
      await trx
        .insertInto('log_tree_heads')
        .values({
          id: uuidv7(),
          tree_size: grown,
          root_hash: payload.rootHash,
          tree_head: head,
          signed_at: timestamp,
        })
        .execute();
      return pending.length === batch ? 'worked' : 'idle';
    });
  }
}

/**
 * The sequencer as an in-process worker: every `intervalMs`, and when a label is sealed here, at once or, if
 * its last pass began less than `gapMs` ago, once `gapMs` has passed. On a busy floor the receipts sealed
 * meanwhile go into that one pass, its one transaction and its one signed tree head, instead of a pass for
 * every few seals.
 */
export function startSequencer(
  log: TransparencyLog,
  deps: { log: Logger; intervalMs: number; gapMs: number },
): PollingLoop {
  const loop = new PollingLoop({
    name: 'transparency log sequencer',
    pollMs: deps.intervalMs,
    wakeGapMs: deps.gapMs,
    log: deps.log,
    pass: () => log.sequence(),
  });
  loop.start();
  return loop;
}
