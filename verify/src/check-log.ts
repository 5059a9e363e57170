/** Links 7 and 8: the receipt's place in the transparency log, and the signed tree head. */
import { TYP, verifyJws, peekPayload } from './jws.js';
import { assertSignedInWindow, controlPlaneKey, type ControlPlaneKey } from './keys.js';
import { hashFromHex, leafHash, verifyInclusion } from './merkle.js';
import { Pending } from './result.js';
import { Broken, int, obj, str, time, type Json } from './shape.js';
import type { SealContext, VerifiedHead } from './seal-context.js';

function logOf(ctx: SealContext): Json {
  if (ctx.seal.log === null) throw new Pending('the log has not taken this seal in yet; check again later');
  return obj(ctx.seal.log, 'the seal log');
}

/** Link 7: the receipt's leaf hash and the inclusion proof lead to the tree head's root (RFC 9162 §2.1.3.2). */
export function checkLogEntry(ctx: SealContext): string {
  const log = logOf(ctx);
  const leafIndex = int(log, 'leafIndex', 'log');
  const treeSize = int(log, 'treeSize', 'log');
  const head = peekPayload(log.treeHead);
  if (head === null) throw new Broken('the seal has no tree head');
  const headSize = int(head, 'treeSize', 'tree head');
  if (headSize !== treeSize)
    throw new Broken(`the proof is for a tree of ${treeSize}, the head is of ${headSize}`);
  if (leafIndex >= treeSize) throw new Broken(`leaf ${leafIndex} cannot be in a tree of ${treeSize}`);
  const root = hashFromHex(head.rootHash);
  if (root === null) throw new Broken("the tree head's rootHash is not a SHA-256");
  const path = Array.isArray(log.inclusionProof) ? log.inclusionProof.map(hashFromHex) : [null];
  if (path.some((p) => p === null)) throw new Broken('the inclusion proof is not a list of SHA-256 hashes');
  const receipt = ctx.seal.sealReceipt;
  if (typeof receipt !== 'string') throw new Broken('the seal has no receipt');
  const leaf = leafHash(Buffer.from(receipt, 'ascii'));
  if (!verifyInclusion(leafIndex, treeSize, leaf, path as Buffer[], root)) {
    throw new Broken(`the receipt is not leaf ${leafIndex} of the tree of ${treeSize} the head signs`);
  }
  return `the receipt is leaf ${leafIndex} of ${treeSize}, ${path.length} hashes up to the head's root`;
}

/**
 * A signed tree head of this proof's log: typ dpp-tree-head+jws, signed by the control plane inside its
 * key's window, issued by the proof's issuer, naming this log. Throws Broken.
 */
export async function readTreeHead(
  jws: unknown,
  expected: { keys: readonly ControlPlaneKey[] | null; issuer: string; logUrl: string },
): Promise<{ head: VerifiedHead; kid: string }> {
  const keys = expected.keys;
  if (keys === null) throw new Broken("the control plane's keys are not available");
  const { payload: h, kid } = await verifyJws(jws, TYP.treeHead, (k) => controlPlaneKey(keys, k)?.jwk);
  const at = time(h, 'timestamp', 'tree head');
  assertSignedInWindow(controlPlaneKey(keys, kid)!, at, 'signed at');
  if (h.iss !== expected.issuer)
    throw new Broken(`it is issued by ${String(h.iss)}, the proof by ${expected.issuer}`);
  const log = str(h, 'log', 'tree head');
  if (log !== expected.logUrl) throw new Broken(`it is a head of the log ${log}, not of ${expected.logUrl}`);
  const rootHash = str(h, 'rootHash', 'tree head');
  if (hashFromHex(rootHash) === null) throw new Broken('its rootHash is not a SHA-256');
  const head: VerifiedHead = {
    log,
    treeSize: int(h, 'treeSize', 'tree head'),
    rootHash,
    timestamp: new Date(at).toISOString(),
    treeHead: jws as string,
  };
  return { head, kid };
}

/** Link 8: the seal's tree head, signed by the control plane for this proof's log. */
export async function checkTreeHead(ctx: SealContext): Promise<string> {
  const log = logOf(ctx);
  const { head, kid } = await readTreeHead(log.treeHead, {
    keys: ctx.requireKeys(),
    issuer: ctx.proof.issuer,
    logUrl: ctx.logUrl,
  });
  ctx.head = head;
  return (
    `size ${head.treeSize}, root ${head.rootHash.slice(0, 12)}…, signed by control-plane key ${kid} ` +
    `at ${head.timestamp}`
  );
}
