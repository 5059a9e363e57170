/**
 * One run of the verifier: obtain the proof, judge the keys, each seal's links and the log's consistency,
 * remember the newest tree head.
 */
import { writeFile } from 'node:fs/promises';
import type { Options } from './args.js';
import { checkSeals } from './check.js';
import { readTreeHead } from './check-log.js';
import { checkOffline, checkOnline, type LogSource } from './consistency.js';
import { originOf } from './digital-link.js';
import { reasonOf, VerifyError } from './errors.js';
import { obtainProof, parseJsonFile, readInputFile, type InputIo } from './input.js';
import { parseSigningKeys, type ControlPlaneKey } from './keys.js';
import { assertAnchored, fetchConsistencyProof, fetchLatestTreeHead, getJson } from './net.js';
import { logUrlOf, parseProof, type LabelProof } from './proof.js';
import { buildReport, type Report } from './report.js';
import { broken, judge, type LinkResult } from './result.js';
import type { VerifiedHead } from './seal-context.js';
import { defaultStatePath, loadState, remember, rememberedHeads, saveState } from './state.js';

export interface VerifyIo extends InputIo {
  env: Readonly<Record<string, string | undefined>>;
  homedir: string;
  /** Warnings that do not change the verdict (the state file could not be written). */
  warn(message: string): void;
}

async function save(path: string, doc: unknown): Promise<void> {
  try {
    await writeFile(path, `${JSON.stringify(doc, null, 2)}\n`);
  } catch (e) {
    throw new VerifyError('INPUT_UNREADABLE', `cannot write ${path}: ${reasonOf(e)}`, { cause: e });
  }
}

/** Link 1: the control plane's keys, from --keys or from the proof's signingKeys link on the anchor's origin. */
async function judgeKeys(
  proof: LabelProof,
  anchor: string | null,
  opts: Options,
  io: VerifyIo,
): Promise<{ result: LinkResult; keys: ControlPlaneKey[] | null }> {
  let keysDoc: unknown;
  let from: string;
  if (opts.keys !== undefined) {
    keysDoc = parseJsonFile(await readInputFile(opts.keys, 'the keys file'), opts.keys);
    from = opts.keys;
  } else {
    from = proof.links.signingKeys;
    const fetched = await judge('keys', async () => {
      if (anchor === null) throw new VerifyError('NOT_A_PROOF', "the label's Digital Link is not a URL");
      assertAnchored(proof.links.signingKeys, anchor, 'signingKeys');
      assertAnchored(proof.links.treeHead, anchor, 'treeHead');
      assertAnchored(proof.links.consistency, anchor, 'consistency');
      try {
        keysDoc = await getJson(io.fetch, proof.links.signingKeys);
      } catch (e) {
        throw new Error(`cannot fetch them: ${reasonOf(e)}`);
      }
      return '';
    });
    if (fetched.status !== 'verified') return { result: fetched, keys: null };
  }
  if (opts.saveKeys !== undefined) await save(opts.saveKeys, keysDoc);
  let keys: ControlPlaneKey[] | null = null;
  const result = await judge('keys', () => {
    keys = parseSigningKeys(keysDoc);
    const current = keys.filter((k) => k.until === null).map((k) => k.kid);
    return (
      `${keys.length} control-plane key(s) from ${from}` +
      (current.length > 0 ? `, current ${current.join(', ')}` : '')
    );
  });
  return { result, keys };
}

export async function runVerify(opts: Options, io: VerifyIo): Promise<Report> {
  const obtained = await obtainProof(opts.input, opts.offline, io);
  const proof = parseProof(obtained.proofDoc);
  if (opts.saveProof !== undefined) await save(opts.saveProof, obtained.proofDoc);
  // The trust anchor is the origin of the Digital Link: the keys and the log must be served from it.
  const anchor = obtained.link?.origin ?? originOf(proof.label.digitalLink);
  const { result: keysResult, keys } = await judgeKeys(proof, anchor, opts, io);
  const seals = await checkSeals(proof, keys, obtained.link);

  const logUrl = logUrlOf(proof);
  const statePath = opts.noState ? undefined : (opts.state ?? defaultStatePath(io.env, io.homedir));
  const state = statePath === undefined ? { version: 1 as const, logs: {} } : await loadState(statePath);
  const remembered = rememberedHeads(state, logUrl);
  const heads = seals.map((s) => ({
    headStatus: s.links.find((l) => l.link === 'tree head')!.status,
    head: s.head,
  }));
  let consistency: LinkResult[];
  let newest: VerifiedHead | undefined;
  if (opts.offline) {
    consistency = checkOffline(heads, remembered);
    if (consistency.every((c) => c.status !== 'broken')) {
      newest = heads.flatMap((h) => (h.head ? [h.head] : [])).sort((a, b) => b.treeSize - a.treeSize)[0];
    }
  } else {
    const source: LogSource = {
      latestHead: async () => {
        const jws = await fetchLatestTreeHead(io.fetch, proof.links.treeHead);
        return (await readTreeHead(jws, { keys, issuer: proof.issuer, logUrl })).head;
      },
      consistencyProof: (first, second) =>
        fetchConsistencyProof(io.fetch, proof.links.consistency, first, second),
    };
    ({ results: consistency, latest: newest } = await checkOnline(heads, remembered, source));
  }
  seals.forEach((s, i) => s.links.push(consistency[i] ?? broken('log consistency', 'not checked')));

  if (statePath !== undefined && newest !== undefined) {
    remember(state, newest);
    try {
      await saveState(statePath, state);
    } catch (e) {
      io.warn(`cannot write the state file ${statePath}: ${reasonOf(e)}`);
    }
  }
  return buildReport({
    input: opts.input,
    digitalLink: obtained.link?.url,
    proofUrl: obtained.proofUrl,
    label: proof.label,
    keys: keysResult,
    seals: seals.map((s) => ({ jobRef: s.jobRef, links: s.links })),
  });
}
