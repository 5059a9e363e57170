/**
 * Done-when of the label proof (docs/label-proof.md): labels printed by the agent on the simulator, then the
 * dpp-verify CLI, built as it is published, run on the resolver URL, on the simulator's PNG of the label and
 * offline on a saved proof: all verified. One byte changed in each link of a real proof is caught and named;
 * a log rewritten by its operator (an entry dropped, two reordered) is caught by the heads the verifier
 * remembered; a proof sealed under a key since retired still verifies.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TREE_HEAD_TYPE, canonicalJsonBytes, type LabelProof } from '@dpp/shared';
import { appendNodes, memoryReader, treeRoot } from '@dpp/control-plane';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { startFloor, type Floor } from '../agent/support/floor.js';
import { jobDetail, printableProduct, queueJobs } from '../agent/support/journey.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'verify/dist/cli.js');

/** Polls `ready` until it holds (hooks cannot use expect.poll). */
async function until(ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface CliRun {
  code: number;
  out: string;
}

describe('dpp-verify on labels the agent printed', () => {
  let t: TestControlPlane;
  let key: string;
  let floor: Floor;
  let dir: string;
  let links: string[];
  let png: string;

  /** Runs the built CLI as a third party would; `state` is its file of remembered tree heads. */
  async function verify(...args: string[]): Promise<CliRun> {
    try {
      const { stdout } = await run(process.execPath, [CLI, ...args], { timeout: 30_000 });
      return { code: 0, out: stdout };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  }
  const state = () => ['--state', path.join(dir, 'heads.json')];
  const proofOf = async (link: string): Promise<LabelProof> => {
    const url = link.replace(/^.*\/01\/(\d+)\/21\/(.+)$/, '/api/v2/public/labels/$1/$2/proof');
    return (await t.call('GET', url)).body as LabelProof;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'dpp-verify-e2e-'));
    // The CLI as npm would pack it: compiled to dist/ with its own tsconfig.
    await run('npx', ['tsc', '-p', path.join(ROOT, 'verify/tsconfig.build.json')], { cwd: ROOT });
    t = await startTestControlPlane({
      dialect: 'sqlite',
      mqtt: true,
      env: { LOG_SEQUENCE_INTERVAL_MS: '100' },
    });
    key = t.tenants.a.admin;
    const product = await printableProduct(t, key, 2);
    floor = await startFloor(t, key, { printers: [{ name: 'zebra-1', rfid: true }] });
    const refs = await queueJobs(t, key, product);
    await until(async () => {
      const jobs = await Promise.all(refs.map((r) => jobDetail(t, key, r)));
      return jobs.every((j) => j.state === 'SEALED');
    }, 60_000);
    links = await Promise.all(refs.map(async (r) => (await jobDetail(t, key, r)).digitalLink as string));
    // Both receipts in the log under a signed head.
    await until(async () => ((await proofOf(links[1]!)).seals?.[0]?.log?.treeSize ?? 0) >= 2, 10_000);
    png = floor.printers['zebra-1']!.labels[0]!.pngPath;
  }, 120_000);
  afterAll(async () => {
    await floor?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('verifies a label from its Digital Link, from the printed PNG, and offline from saved files', async () => {
    const online = await verify(
      links[0]!,
      ...state(),
      '--save-proof',
      path.join(dir, 'proof.json'),
      '--save-keys',
      path.join(dir, 'keys.json'),
    );
    expect(online.out).toContain('✔ verified: all 9 links of 1 seal');
    expect(online.code).toBe(0);
    for (const link of [
      'device statement',
      'evidence bundle',
      'passport version',
      'seal receipt',
      'EPCIS event',
      'log entry',
      'tree head',
      'log consistency',
    ]) {
      expect(online.out).toMatch(new RegExp(`✔ ${link} +verified`));
    }

    const fromPng = await verify(png, ...state());
    expect(fromPng.out).toContain(links[0]);
    expect(fromPng.code, fromPng.out).toBe(0);

    const offline = await verify(
      path.join(dir, 'proof.json'),
      '--offline',
      '--keys',
      path.join(dir, 'keys.json'),
      ...state(),
    );
    expect(offline.code, offline.out).toBe(0);
  });

  it('names the link a changed byte breaks', async () => {
    const proof = JSON.parse(await readFile(path.join(dir, 'proof.json'), 'utf8')) as LabelProof;
    /** One character changed, inside the signature of a JWS or a hex hash, keeping its form. */
    const flip = (s: string, at = s.length - 2) =>
      s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
    const flipHex = (s: string) => (s[0] === '0' ? '1' : '0') + s.slice(1);
    const cases: [string, (p: LabelProof) => void][] = [
      [
        'passport version',
        (p) =>
          void (p.seals[0]!.passportVersion!.contentHash = flipHex(p.seals[0]!.passportVersion!.contentHash)),
      ],
      ['evidence bundle', (p) => void (p.seals[0]!.evidenceBundle = flip(p.seals[0]!.evidenceBundle))],
      ['seal receipt', (p) => void (p.seals[0]!.sealReceipt = flip(p.seals[0]!.sealReceipt))],
      [
        'EPCIS event',
        (p) =>
          void (p.seals[0]!.epcisEvent!.eventTime = String(p.seals[0]!.epcisEvent!.eventTime).replace(
            /\d(?=Z$|\.\d+Z$)/,
            (d) => String((Number(d) + 1) % 10),
          )),
      ],
      [
        'log entry',
        (p) => void (p.seals[0]!.log!.inclusionProof[0] = flipHex(p.seals[0]!.log!.inclusionProof[0]!)),
      ],
      ['tree head', (p) => void (p.seals[0]!.log!.treeHead = flip(p.seals[0]!.log!.treeHead))],
    ];
    for (const [link, tamper] of cases) {
      const copy = structuredClone(proof);
      tamper(copy);
      const file = path.join(dir, `tampered-${link.replace(/ /g, '-')}.json`);
      await writeFile(file, JSON.stringify(copy));
      const r = await verify(file, '--offline', '--keys', path.join(dir, 'keys.json'), '--no-state');
      expect(r.code, `${link}\n${r.out}`).toBe(1);
      expect(r.out, link).toMatch(new RegExp(`✘ ${link} +broken`));
    }
  });

  it('catches a log its operator rewrote, by the heads it saw before', async () => {
    const db = t.cp.store.db;
    const issuer = (await proofOf(links[1]!)).issuer;
    const leaves = (
      await db.selectFrom('log_nodes').select('hash').where('level', '=', 0).orderBy('node_index').execute()
    ).map((r) => Buffer.from(r.hash, 'hex'));
    /**
     * The operator rebuilds the tree over other leaves, deletes every head it signed and signs one for the new
     * tree with the control plane's key.
     */
    const rewrite = async (order: Buffer[]) => {
      await db.deleteFrom('log_tree_heads').execute();
      await db.deleteFrom('log_nodes').execute();
      const nodes = appendNodes(0, order, () => Buffer.alloc(32));
      await db
        .insertInto('log_nodes')
        .values(nodes.map((n) => ({ level: n.level, node_index: n.index, hash: n.hash.toString('hex') })))
        .execute();
      await db.updateTable('transparency_log').set({ tree_size: order.length }).execute();
      const timestamp = new Date().toISOString();
      const payload = {
        iss: issuer,
        log: `${issuer}/api/v2/public/log`,
        treeSize: order.length,
        rootHash: treeRoot(order.length, memoryReader(order)).toString('hex'),
        timestamp,
      };
      const head = await t.cp.services.keyring.signCompact(canonicalJsonBytes(payload), TREE_HEAD_TYPE);
      await db
        .insertInto('log_tree_heads')
        .values({
          id: `forged-${order.length}-${timestamp}`,
          tree_size: order.length,
          root_hash: payload.rootHash,
          tree_head: head,
          signed_at: timestamp,
        })
        .execute();
    };
    expect((await verify(links[1]!, ...state())).code).toBe(0); // remembers the honest head

    await rewrite([leaves[1]!, leaves[0]!, ...leaves.slice(2)]);
    const reordered = await verify(links[1]!, ...state());
    expect(reordered.code).toBe(1);
    expect(reordered.out).toMatch(/✘ log consistency +broken: .*fork/);

    await rewrite(leaves.slice(1));
    const dropped = await verify(links[1]!, ...state());
    expect(dropped.code).toBe(1);
    expect(dropped.out).toMatch(/✘ log consistency +broken/);

    // Restored as it was: the remembered heads agree with it again.
    await rewrite(leaves);
    expect((await verify(links[1]!, ...state())).code).toBe(0);
  });

  it('still verifies a proof sealed under a key the control plane has since retired', async () => {
    const keyring = t.cp.services.keyring;
    const receipt = (await proofOf(links[0]!)).seals[0]!.sealReceipt;
    const oldKid = (
      JSON.parse(Buffer.from(receipt.split('.')[0]!, 'base64url').toString()) as { kid: string }
    ).kid;
    await keyring.rotate();
    await t.cp.store.db
      .updateTable('signing_keys')
      .set({ retired_at: new Date(Date.now() - 1000).toISOString() })
      .where('kid', '=', oldKid)
      .execute();
    await keyring.init();
    const jwks = (await t.call('GET', '/.well-known/jwks.json')).body.keys as { kid: string }[];
    expect(jwks.map((k) => k.kid)).not.toContain(oldKid);
    const r = await verify(links[0]!, '--no-state');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(oldKid);
  });
});
