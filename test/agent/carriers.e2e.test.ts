/**
 * Every carrier a label can carry, through the whole loop: a real control plane, the agent and a simulated
 * printer with RFID and NFC encoders and a scanner. A registered alphanumeric serial gets an SGTIN-198; its
 * label carries a QR code, a DataMatrix with the Digital Link, a GS1-128, the RFID tag and the NFC tag, each
 * proven before printing and verified after, named with its content in the evidence, and the label's proof
 * verifies offline-style with dpp-verify. A numeric serial's label carries an element-string DataMatrix and
 * an SGTIN-96.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSgtin198, expectedCarriers, type LabelCarrier, type LabelTemplate } from '@dpp/shared';
import { decodeSymbolsPng } from '@dpp/firmware-sim';
import { startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { startFloor, type Floor } from './support/floor.js';
import { exportRows, jobDetail, printableProduct, type Json } from './support/journey.js';

const SERIAL = 'LOT7/A-1';
const ROOT = path.resolve(import.meta.dirname, '../..');

interface VerifyReport {
  seals: { links: { link: string; status: string; detail: string }[] }[];
}

/** `npm run verify -- <link> --json`, as anyone with this repository runs dpp-verify. */
async function verify(
  link: string,
  state: string,
): Promise<{ code: number; report?: VerifyReport; out: string }> {
  const args = [path.join(ROOT, 'verify/src/cli.ts'), link, '--json', '--state', state];
  try {
    const { stdout } = await promisify(execFile)(path.join(ROOT, 'node_modules/.bin/tsx'), args, {
      timeout: 30_000,
    });
    return { code: 0, report: JSON.parse(stdout) as VerifyReport, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    const out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    return { code: e.code ?? -1, ...(e.stdout ? { report: JSON.parse(e.stdout) as VerifyReport } : {}), out };
  }
}
const linkOf = (r: { report?: VerifyReport }, link: string) =>
  r.report?.seals[0]?.links.find((l) => l.link === link);
const BIG: Partial<LabelTemplate> = { widthMm: 100, heightMm: 60 };

describe.each(testDialects())('every carrier on one label (%s)', (dialect) => {
  let t: TestControlPlane;
  let key: string;
  let floor: Floor | undefined;

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, mqtt: true, env: { LOG_SEQUENCE_INTERVAL_MS: '100' } });
    key = t.tenants.a.admin;
  });
  afterAll(async () => {
    await floor?.close();
    await t?.close();
  });

  async function queue(gtin: string, serial: string, labelTemplate: Partial<LabelTemplate>): Promise<string> {
    const r = await t.call('POST', '/api/v2/aidc/jobs', {
      key,
      body: { gtin, serial, printer: 'zebra-all', labelTemplate },
    });
    expect(r.status, r.text).toBe(201);
    return r.body.data.jobRef as string;
  }

  const evidenceOf = (job: Json): Record<string, Json> =>
    Object.fromEntries(job.evidence.map((e: { kind: string; payload: unknown }) => [e.kind, e.payload]));

  it('seals an SGTIN-198 label with QR, DataMatrix, GS1-128, RFID and NFC, and one with an element-string DataMatrix', async () => {
    const product = await printableProduct(t, key, 1);
    const reg = await t.call('POST', '/api/v2/carriers/batch', {
      key,
      body: { productId: product.productId, serials: [SERIAL] },
    });
    expect(reg.status, reg.text).toBe(201);
    floor = await startFloor(t, key, {
      printers: [{ name: 'zebra-all', rfid: true, sim: { nfc: true }, config: { nfc: true } }],
    });
    const allRef = await queue(product.gtin, SERIAL, {
      ...BIG,
      dataMatrix: 'digital-link',
      gs1128: true,
      nfc: true,
    });
    const elementRef = await queue(product.gtin, product.serials[0]!, {
      ...BIG,
      dataMatrix: 'element-string',
    });
    await expect
      .poll(
        async () =>
          (await Promise.all([allRef, elementRef].map((r) => jobDetail(t, key, r)))).map((j) => j.state),
        {
          timeout: 90_000,
          interval: 300,
        },
      )
      .toEqual(['SEALED', 'SEALED']);

    // The SGTIN-198 label: its EPC, and every carrier in every piece of evidence.
    const all = await jobDetail(t, key, allRef);
    expect(all.sgtin96Epc).toBeNull();
    expect(all.epc.scheme).toBe('sgtin-198');
    expect(decodeSgtin198(all.epc.hex)).toMatchObject({ gtin: product.gtin, serial: SERIAL });
    expect(all.digitalLink).toMatch(/\/21\/LOT7%2FA-1$/);
    const expected: LabelCarrier[] = expectedCarriers(all.labelTemplate, {
      digitalLink: all.digitalLink,
      gtin: product.gtin,
      serial: SERIAL,
      epc: all.epc,
    });
    expect(expected.map((c) => c.type)).toEqual(['qr', 'datamatrix', 'gs1-128', 'rfid', 'nfc']);
    const e = evidenceOf(all);
    expect(e.render_manifest.carriers).toEqual(expect.arrayContaining(expected));
    expect(e.render_manifest.carriers).toHaveLength(expected.length);
    expect(e.attestation).toMatchObject({ epcReadBack: all.epc.hex, nfcReadBack: all.digitalLink });
    expect(e.scan_result).toMatchObject({
      decodedLink: all.digitalLink,
      epcRead: all.epc.hex,
      epcMatches: true,
    });
    expect(e.scan_result.carriers).toEqual(
      expect.arrayContaining(expected.filter((c) => ['qr', 'datamatrix', 'gs1-128'].includes(c.type))),
    );

    // What the simulated printer printed and wrote: the three symbols on the label, both tags.
    const sim = floor.printers['zebra-all']!;
    const printed = sim.labels.filter((l) => !l.void);
    const label = printed.find((l) => l.epc === all.epc.hex)!;
    expect(label.nfcUri).toBe(all.digitalLink);
    const symbols = (await decodeSymbolsPng(label.png)).map((s) => s.aimId).sort();
    expect(symbols).toEqual([']C1', ']Q1', ']d1']);

    // The element-string DataMatrix, with an SGTIN-96 on its tag.
    const element = await jobDetail(t, key, elementRef);
    expect(element.epc.scheme).toBe('sgtin-96');
    expect(evidenceOf(element).scan_result.carriers).toContainEqual({
      type: 'datamatrix',
      content: 'element-string',
      data: `(01)${product.gtin}(21)${product.serials[0]}`,
    });

    // The print file names the SGTIN-198 and the element string; EPCIS commissions the escaped URI.
    const row = (await exportRows(t, key, product.productId)).find((r: Json) => r.serial === SERIAL);
    expect(row).toMatchObject({
      sgtin96_epc: '',
      sgtin198_epc: all.epc.hex,
      element_string: `(01)${product.gtin}(21)${SERIAL}`,
    });

    // A third party checks the label's proof, carriers included (once its receipt is in the log).
    const state = path.join(floor.dir, 'heads.json');
    let r = await verify(all.digitalLink, state);
    for (let i = 0; i < 20 && linkOf(r, 'log entry')?.status !== 'verified'; i++) {
      await new Promise((done) => setTimeout(done, 300));
      r = await verify(all.digitalLink, state);
    }
    expect(r.code, r.out).toBe(0);
    expect(linkOf(r, 'evidence bundle')!.detail).toContain(
      'carriers QR code, DataMatrix (Digital Link), GS1-128, RFID SGTIN-198, NFC each verified',
    );
    expect(linkOf(r, 'EPCIS event')!.detail).toContain('LOT7%2FA-1');
  });
});
