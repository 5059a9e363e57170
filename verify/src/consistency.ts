/**
 * Link 9, log consistency (label-proof.md, "The log"): a tree head proves a label was logged; that the log
 * was not rewritten since needs earlier heads to compare with. Online, every remembered head and each seal's
 * head are proven a prefix of the log's latest head (RFC 9162 §2.1.4.2); a head of the same size with
 * another root is a fork. Offline, heads are compared with remembered heads of the same size only.
 */
import { reasonOf } from './errors.js';
import { hashFromHex, verifyConsistency } from './merkle.js';
import { broken, verified, type LinkResult, type LinkStatus } from './result.js';
import type { VerifiedHead } from './seal-context.js';
import type { RememberedHead } from './state.js';

/** The log, online: its latest head and consistency proofs between two sizes. */
export interface LogSource {
  /** The latest head, verified (signature, window, issuer, log URL). */
  latestHead(): Promise<VerifiedHead>;
  /** The consistency proof from `first` to `second` leaves, as hashes. */
  consistencyProof(first: number, second: number): Promise<Buffer[]>;
}

export interface SealHead {
  /** The status of the seal's tree head link. */
  headStatus: LinkStatus;
  head: VerifiedHead | undefined;
}

type HeadLike = RememberedHead | VerifiedHead;

const key = (h: HeadLike): string => `${h.treeSize}:${h.rootHash}`;

/** Why `a` and `b` cannot both be heads of one append-only log, or null when they can. */
async function pairProblem(a: HeadLike, b: HeadLike, source: LogSource): Promise<string | null> {
  const [small, big] = a.treeSize <= b.treeSize ? [a, b] : [b, a];
  if (small.treeSize === big.treeSize) {
    return small.rootHash === big.rootHash
      ? null
      : `fork: two heads of size ${small.treeSize} with different roots (${small.rootHash.slice(0, 12)}…, ` +
          `${big.rootHash.slice(0, 12)}…)`;
  }
  let proof: Buffer[];
  try {
    proof = await source.consistencyProof(small.treeSize, big.treeSize);
  } catch (e) {
    return `no consistency proof from ${small.treeSize} to ${big.treeSize}: ${reasonOf(e)}`;
  }
  const ok = verifyConsistency(
    small.treeSize,
    big.treeSize,
    hashFromHex(small.rootHash)!,
    hashFromHex(big.rootHash)!,
    proof,
  );
  return ok
    ? null
    : `the log of ${big.treeSize} does not extend the head of ${small.treeSize} seen before ` +
        '(an entry was dropped, changed or reordered)';
}

function notJudgeable(s: SealHead): LinkResult | undefined {
  if (s.headStatus === 'pending') {
    return { link: 'log consistency', status: 'pending', detail: 'the seal is not in the log yet' };
  }
  if (s.head === undefined) return broken('log consistency', 'the tree head did not verify');
  return undefined;
}

/** Offline: each seal's head against the remembered heads of the same size. */
export function checkOffline(
  seals: readonly SealHead[],
  remembered: readonly RememberedHead[],
): LinkResult[] {
  return seals.map((s) => {
    const skip = notJudgeable(s);
    if (skip) return skip;
    const head = s.head!;
    const same = remembered.filter((r) => r.treeSize === head.treeSize);
    const fork = same.find((r) => r.rootHash !== head.rootHash);
    if (fork) {
      return broken(
        'log consistency',
        `fork: a head of size ${head.treeSize} seen at ${fork.timestamp} has another root`,
      );
    }
    return verified(
      'log consistency',
      same.length > 0
        ? `offline: the same root as the head of size ${head.treeSize} seen before`
        : `offline: no remembered head of size ${head.treeSize} to compare with; run online to prove the log ` +
            'only grew',
    );
  });
}

/**
 * Online: the latest head verifies, and every remembered head and each seal's head is consistent with it.
 * Returns one result per seal and the latest head (to remember) when it verified.
 */
export async function checkOnline(
  seals: readonly SealHead[],
  remembered: readonly RememberedHead[],
  source: LogSource,
): Promise<{ results: LinkResult[]; latest: VerifiedHead | undefined }> {
  let latest: VerifiedHead;
  try {
    latest = await source.latestHead();
  } catch (e) {
    const reason = `the log's latest tree head: ${reasonOf(e)}`;
    return {
      results: seals.map((s) => notJudgeable(s) ?? broken('log consistency', reason)),
      latest: undefined,
    };
  }
  const problems = new Map<string, string | null>();
  const problemOf = async (h: HeadLike): Promise<string | null> => {
    if (!problems.has(key(h))) problems.set(key(h), await pairProblem(h, latest, source));
    return problems.get(key(h))!;
  };
  let rememberedProblem: string | null = null;
  for (const r of remembered) {
    const p = await problemOf(r);
    if (p !== null) {
      rememberedProblem = `against the head of ${r.treeSize} seen at ${r.timestamp}: ${p}`;
      break;
    }
  }
  const results: LinkResult[] = [];
  for (const s of seals) {
    const skip = notJudgeable(s);
    if (skip) {
      // A seal not in the log yet proves nothing about the log, but a log that no longer extends what was seen
      // before is broken whatever this seal's state.
      results.push(rememberedProblem !== null ? broken('log consistency', rememberedProblem) : skip);
      continue;
    }
    const own = await problemOf(s.head!);
    if (own !== null) results.push(broken('log consistency', own));
    else if (rememberedProblem !== null) results.push(broken('log consistency', rememberedProblem));
    else {
      results.push(
        verified(
          'log consistency',
          `the log's latest head (size ${latest.treeSize}, ${latest.timestamp}) extends this head` +
            (remembered.length > 0 ? ` and the ${remembered.length} head(s) seen before` : ''),
        ),
      );
    }
  }
  return { results, latest: rememberedProblem === null ? latest : undefined };
}
