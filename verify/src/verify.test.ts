import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { LINKS } from './result.js';
import { linkOf, notVerified, run, tempDir } from './test-support/run.js';
import { sign, T, World } from './test-support/world.js';
import { TYP } from './jws.js';

/** Changes one character of a compact JWS's payload (base64url), keeping it decodable. */
function flipPayloadChar(jws: string): string {
  const [h, p, s] = jws.split('.') as [string, string, string];
  const i = Math.floor(p.length / 2);
  const c = p[i] === 'A' ? 'B' : 'A';
  return `${h}.${p.slice(0, i)}${c}${p.slice(i + 1)}.${s}`;
}

let world: World;
let dir: string;

async function check(extra: string[] = []) {
  const state = join(dir, 'heads.json');
  return run([world.digitalLink, '--json', '--state', state, ...extra], { fetch: world.fetch });
}

beforeEach(async () => {
  world = await World.create();
  dir = tempDir();
});

describe('a sound proof', () => {
  it('verifies every link, in the order of the doc, and exits 0', async () => {
    await world.seal();
    const r = await check();
    expect(notVerified(r.report)).toEqual([]);
    expect(r.code).toBe(0);
    expect([r.report!.keys.link, ...r.report!.seals[0]!.links.map((l) => l.link)]).toEqual([...LINKS]);
    expect(linkOf(r.report, 'evidence bundle').detail).toMatch(
      /^printed by device dev_1 at 2026-04-01T10:00:00.000Z, key /,
    );
    expect(linkOf(r.report, 'EPCIS event').detail).toContain('urn:epc:id:sgtin:9506000.013435.1001');
  });

  it("verifies a label without an EPC, taking the SGTIN from the receipt and the event's company prefix", async () => {
    await world.seal({ epc: false });
    const r = await check();
    expect(notVerified(r.report)).toEqual([]);
  });

  it('verifies an old proof whose receipt and head were signed by a key retired since, inside its window', async () => {
    await world.seal({ sealedAt: '2025-12-01T08:00:00.000Z', signer: 'retired' });
    const r = await check();
    expect(notVerified(r.report)).toEqual([]);
    expect(linkOf(r.report, 'seal receipt').detail).toContain('cp-2025');
  });

  it('falls back to the proof route when the resolver offers no linkset', async () => {
    await world.seal();
    world.status.set(`/01/09506000134352/21/1001`, 406);
    const r = await check();
    expect(r.code).toBe(0);
    expect(r.report!.proofUrl).toBe(world.proofUrl);
  });

  it('reports a seal the log has not taken in yet as pending, and exits 1', async () => {
    await world.seal();
    world.firstSeal.log = null as never;
    const r = await check();
    expect(r.code).toBe(1);
    expect(notVerified(r.report)).toEqual(['log entry', 'tree head', 'log consistency']);
    expect(linkOf(r.report, 'log entry').status).toBe('pending');
  });
});

describe('one changed link is caught and named', () => {
  it('passport version: the seal lists another content hash', async () => {
    await world.seal();
    (world.firstSeal.passportVersion as { contentHash: string }).contentHash = 'f'.repeat(64);
    const r = await check();
    expect(r.code).toBe(1);
    expect(notVerified(r.report)).toEqual(['passport version']);
  });

  it('evidence bundle: one character of its payload', async () => {
    await world.seal();
    world.firstSeal.evidenceBundle = flipPayloadChar(world.firstSeal.evidenceBundle as string);
    const r = await check();
    expect(linkOf(r.report, 'evidence bundle')).toMatchObject({ status: 'broken' });
    expect(linkOf(r.report, 'evidence bundle').detail).toMatch(/signature|JSON/);
    expect(linkOf(r.report, 'seal receipt').detail).toContain('bundleSha256');
  });

  it('evidence bundle: signed by the device, but the bytes sent are not the bytes rendered', async () => {
    await world.seal({ bundle: (p) => ((p.spoolReceipt as { bytes: number }).bytes = 1235) });
    const r = await check();
    expect(notVerified(r.report)).toEqual(['evidence bundle']);
    expect(linkOf(r.report, 'evidence bundle').detail).toContain('size sent');
  });

  it('evidence bundle: an EPC read back that is not the one rendered', async () => {
    await world.seal({
      bundle: (p) => ((p.attestation as { epcReadBack: string }).epcReadBack = '30395DFA80C8F7C000000001'),
    });
    const r = await check();
    expect(notVerified(r.report)).toEqual(['evidence bundle']);
  });

  it('seal receipt: one character of its payload', async () => {
    await world.seal();
    world.firstSeal.sealReceipt = flipPayloadChar(world.firstSeal.sealReceipt as string);
    const r = await check();
    expect(linkOf(r.report, 'seal receipt').status).toBe('broken');
    expect(linkOf(r.report, 'log entry').status).toBe('broken');
  });

  it('seal receipt: countersigned for another serial', async () => {
    await world.seal({ receipt: (p) => (p.serial = '1002') });
    const r = await check();
    expect(notVerified(r.report)).toContain('seal receipt');
    expect(linkOf(r.report, 'seal receipt').detail).toContain('serial');
  });

  it('EPCIS event: one field changed after the receipt hashed it', async () => {
    await world.seal();
    (world.firstSeal.epcisEvent as { eventTime: string }).eventTime = '2026-04-01T10:00:01.000Z';
    const r = await check();
    expect(notVerified(r.report)).toEqual(['EPCIS event']);
    expect(linkOf(r.report, 'EPCIS event').detail).toContain('hashes to');
  });

  it('EPCIS event: hashed by the receipt but commissioning another EPC, or pointing elsewhere', async () => {
    await world.seal({ event: (e) => (e.epcList = ['urn:epc:id:sgtin:9506000.013435.1002']) });
    expect(linkOf((await check()).report, 'EPCIS event').detail).toContain('epcList');
    await world.seal({ event: (e) => (e.certificationInfo = 'https://elsewhere.example/proof') });
    expect(linkOf((await check()).report, 'EPCIS event').detail).toContain('certificationInfo');
    await world.seal({ event: (e) => (e.bizStep = 'shipping') });
    expect(linkOf((await check()).report, 'EPCIS event').detail).toContain('bizStep');
  });

  it('log entry: one hash of the inclusion path, or another leaf index', async () => {
    await world.seal();
    const path = world.firstSeal.log.inclusionProof as string[];
    const good = [...path];
    path[1] = `${path[1]!.slice(0, 63)}${path[1]!.endsWith('0') ? '1' : '0'}`;
    let r = await check();
    expect(notVerified(r.report)).toEqual(['log entry']);
    world.firstSeal.log.inclusionProof = good;
    world.firstSeal.log.leafIndex = (world.firstSeal.log.leafIndex as number) + 1;
    r = await check();
    expect(notVerified(r.report)).toEqual(['log entry']);
  });

  it('tree head: one character of its payload', async () => {
    await world.seal();
    world.firstSeal.log.treeHead = flipPayloadChar(world.firstSeal.log.treeHead as string);
    const r = await check();
    expect(linkOf(r.report, 'tree head').status).toBe('broken');
    expect(linkOf(r.report, 'log consistency').status).toBe('broken');
  });

  it('tree head: signed for another log', async () => {
    await world.seal();
    world.firstSeal.log.treeHead = await sign(world.current, TYP.treeHead, {
      iss: world.issuer,
      log: 'https://dpp.example.com/api/v2/public/other-log',
      treeSize: world.firstSeal.log.treeSize,
      rootHash: '0'.repeat(64),
      timestamp: T.issued,
    });
    const r = await check();
    expect(linkOf(r.report, 'tree head').detail).toContain('other-log');
  });

  it('a JWS of another typ, or a payload that is not canonical JSON, does not verify', async () => {
    await world.seal();
    const receipt = JSON.parse(
      Buffer.from((world.firstSeal.sealReceipt as string).split('.')[1]!, 'base64url').toString(),
    ) as unknown;
    world.firstSeal.deviceStatement = await sign(world.current, TYP.sealReceipt, receipt);
    let r = await check();
    expect(linkOf(r.report, 'device statement').detail).toContain('typ');
    await world.seal();
    const { CompactSign } = await import('jose');
    world.firstSeal.sealReceipt = await new CompactSign(
      new TextEncoder().encode(JSON.stringify(receipt, null, 1)),
    )
      .setProtectedHeader({ alg: 'EdDSA', typ: TYP.sealReceipt, kid: world.current.kid })
      .sign(world.current.privateKey);
    r = await check();
    expect(linkOf(r.report, 'seal receipt').detail).toContain('canonical');
  });
});

describe('keys and devices judged by time', () => {
  it('a receipt signed by the retired key after its window closed is broken', async () => {
    await world.seal({ signer: 'retired' });
    const r = await check();
    expect(linkOf(r.report, 'seal receipt').detail).toMatch(/outside key cp-2025's signing window/);
    expect(linkOf(r.report, 'tree head').status).toBe('broken');
  });

  it('a receipt signed by the current key before its window opened is broken', async () => {
    await world.seal({ sealedAt: '2025-12-01T08:00:00.000Z', signer: 'current' });
    const r = await check();
    expect(linkOf(r.report, 'seal receipt').detail).toMatch(/outside key cp-2026's signing window/);
  });

  it('a bundle a revoked device sealed after its revocation is broken', async () => {
    await world.seal({ revokedAt: '2026-03-15T00:00:00.000Z' });
    const r = await check();
    expect(notVerified(r.report)).toEqual(['evidence bundle']);
    expect(linkOf(r.report, 'evidence bundle').detail).toContain('after the device was revoked');
  });

  it('a bundle the device sealed before its revocation still verifies', async () => {
    await world.seal({ revokedAt: '2026-04-02T00:00:00.000Z' });
    expect((await check()).code).toBe(0);
  });

  it('refuses keys and log links on another origin than the Digital Link', async () => {
    await world.seal();
    (world.proof.links as { signingKeys: string }).signingKeys = 'https://keys.evil.example/signing-keys';
    const r = await check();
    expect(linkOf(r.report, 'keys').detail).toContain('not on the Digital Link');
    expect(r.code).toBe(1);
    (world.proof.links as { signingKeys: string }).signingKeys = `${world.origin}/api/v2/public/signing-keys`;
    (world.proof.links as { treeHead: string }).treeHead =
      'https://log.evil.example/api/v2/public/log/tree-head';
    expect(linkOf((await check()).report, 'keys').status).toBe('broken');
  });
});

describe('log consistency with the heads seen before', () => {
  it('remembers the newest head and proves the next one extends it', async () => {
    await world.seal();
    world.latestSize = world.leaves.length - 2;
    expect((await check()).code).toBe(0);
    world.latestSize = undefined;
    const r = await check();
    expect(r.code).toBe(0);
    expect(linkOf(r.report, 'log consistency').detail).toContain('1 head(s) seen before');
  });

  it('catches a log that dropped an entry since a head was remembered', async () => {
    await world.seal({ before: 6, after: 4 });
    world.latestSize = world.leaves.length - 1;
    expect((await check()).code).toBe(0);
    // The log drops an earlier entry (not the label's) and appends one more: the same size as before
    // plus one, every head re-signed, the label's inclusion proof rebuilt.
    world.latestSize = undefined;
    world.leaves.splice(2, 1);
    world.leaves.push(Buffer.from('appended'), Buffer.from('appended 2'));
    await rebuildSealLog(world);
    const r = await check();
    expect(notVerified(r.report)).toEqual(['log consistency']);
    expect(linkOf(r.report, 'log consistency').detail).toMatch(/does not extend|fork/);
  });

  it('catches a log that reordered two entries', async () => {
    await world.seal({ before: 6, after: 4 });
    expect((await check()).code).toBe(0);
    [world.leaves[0], world.leaves[1]] = [world.leaves[1]!, world.leaves[0]!];
    world.leaves.push(Buffer.from('appended'));
    await rebuildSealLog(world);
    const r = await check();
    expect(notVerified(r.report)).toEqual(['log consistency']);
  });

  it('calls two heads of the same size with different roots a fork', async () => {
    await world.seal({ before: 6, after: 4 });
    expect((await check()).code).toBe(0);
    [world.leaves[0], world.leaves[1]] = [world.leaves[1]!, world.leaves[0]!];
    await rebuildSealLog(world);
    const r = await check();
    expect(linkOf(r.report, 'log consistency').detail).toContain('fork');
  });

  it('offline, compares with remembered heads of the same size only', async () => {
    await world.seal();
    const proof = join(dir, 'proof.json');
    const keys = join(dir, 'keys.json');
    const state = join(dir, 'heads.json');
    writeFileSync(proof, JSON.stringify(world.proof));
    writeFileSync(keys, JSON.stringify(world.keysDoc()));
    const offline = () =>
      run([proof, '--offline', '--keys', keys, '--state', state, '--json'], { fetch: world.fetch });
    let r = await offline();
    expect(r.code).toBe(0);
    expect(linkOf(r.report, 'log consistency').detail).toContain('no remembered head');
    r = await offline();
    expect(linkOf(r.report, 'log consistency').detail).toContain('the same root');
    [world.leaves[0], world.leaves[1]] = [world.leaves[1]!, world.leaves[0]!];
    await rebuildSealLog(world);
    writeFileSync(proof, JSON.stringify(world.proof));
    r = await offline();
    expect(notVerified(r.report)).toEqual(['log consistency']);
    expect(linkOf(r.report, 'log consistency').detail).toContain('fork');
  });
});

/** After the test rewrote the log: the label's leaf index, inclusion proof and head as that log would serve. */
async function rebuildSealLog(w: World): Promise<void> {
  const { auditPath } = await import('./test-support/merkle-reference.js');
  const receipt = Buffer.from(w.firstSeal.sealReceipt as string, 'ascii');
  const leafIndex = w.leaves.findIndex((l) => l.equals(receipt));
  const treeSize = w.firstSeal.log.treeSize as number;
  w.firstSeal.log = {
    leafIndex,
    treeSize,
    inclusionProof: auditPath(leafIndex, w.leaves.slice(0, treeSize)).map((h) => h.toString('hex')),
    treeHead: await w.treeHead(treeSize, T.issued),
  };
}

describe('a label with every carrier', () => {
  const ELEMENT_STRING = '(01)09506000134352(21)1001';

  /** The bundle of a label with a QR code, a DataMatrix, a GS1-128, an RFID tag and an NFC tag. */
  function allCarriers(p: Record<string, unknown>, link: string): void {
    const render = p.renderManifest as Record<string, unknown>;
    const epc = render.sgtin96Epc as string;
    render.carriers = [
      { type: 'qr', data: link },
      { type: 'datamatrix', content: 'digital-link', data: link },
      { type: 'gs1-128', data: ELEMENT_STRING },
      { type: 'rfid', scheme: 'sgtin-96', epc },
      { type: 'nfc', uri: link },
    ];
    (p.scanResult as Record<string, unknown>).carriers = [
      { type: 'qr', data: link },
      { type: 'datamatrix', content: 'digital-link', data: link },
      { type: 'gs1-128', data: ELEMENT_STRING },
    ];
    (p.attestation as Record<string, unknown>).nfcReadBack = link;
  }

  type Bundle = Record<string, Record<string, unknown> & { carriers: Record<string, unknown>[] }>;

  it('verifies each carrier against the label and its read after printing, and names them', async () => {
    await world.seal({ bundle: (p) => allCarriers(p, world.digitalLink) });
    const r = await check();
    expect(notVerified(r.report)).toEqual([]);
    expect(linkOf(r.report, 'evidence bundle').detail).toContain(
      'carriers QR code, DataMatrix (Digital Link), GS1-128, RFID SGTIN-96, NFC each verified',
    );
  });

  it('refuses a DataMatrix that was rendered but never scanned', async () => {
    await world.seal({
      bundle: (p) => {
        allCarriers(p, world.digitalLink);
        const scan = (p as Bundle).scanResult!;
        scan.carriers = scan.carriers.filter((c) => c.type !== 'datamatrix');
      },
    });
    const r = await check();
    expect(notVerified(r.report)).toEqual(['evidence bundle']);
    expect(linkOf(r.report, 'evidence bundle').detail).toContain(
      'DataMatrix (Digital Link) was rendered but never scanned',
    );
  });

  it('refuses a GS1-128 that holds another serial, even when the scan agrees with it', async () => {
    await world.seal({
      bundle: (p) => {
        allCarriers(p, world.digitalLink);
        for (const part of ['renderManifest', 'scanResult'] as const) {
          for (const c of (p as Bundle)[part]!.carriers)
            if (c.type === 'gs1-128') c.data = '(01)09506000134352(21)1002';
        }
      },
    });
    const r = await check();
    expect(linkOf(r.report, 'evidence bundle').detail).toContain(`the label is ${ELEMENT_STRING}`);
  });

  it('refuses an NFC tag that was not read back, or read back another link', async () => {
    await world.seal({
      bundle: (p) => {
        allCarriers(p, world.digitalLink);
        delete (p.attestation as Record<string, unknown>).nfcReadBack;
      },
    });
    expect(linkOf((await check()).report, 'evidence bundle').detail).toContain('NFC tag was never read back');
  });

  it('refuses a render whose RFID carrier and SGTIN-96 field name different EPCs', async () => {
    await world.seal({
      bundle: (p) => {
        allCarriers(p, world.digitalLink);
        for (const c of (p as Bundle).renderManifest!.carriers)
          if (c.type === 'rfid') c.epc = '30395DFA80C8F7C000000001';
      },
    });
    expect(linkOf((await check()).report, 'evidence bundle').detail).toMatch(
      /names EPC .* and, among its carriers/,
    );
  });
});
