/**
 * Print jobs of labels with carriers beyond the QR code and of serials encoded as SGTIN-198: the envelope and
 * the job name the EPC with its scheme, only printers with an NFC encoder claim NFC labels, and every step's
 * evidence must show each carrier with the content the job names (single results and batches alike).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AidcEnvelopeClaimsSchema,
  decodeLabelEpc,
  encodeSgtin198,
  encodeSgtin96,
  gs1ElementString,
} from '@dpp/shared';
import { startJobFloor } from './floor.js';
import type { HttpPrintDevice } from '@dpp/testkit';
import {
  type ClaimedJob,
  printableProduct as journey,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

const ALL_CARRIERS = { rfid: true, dataMatrix: 'element-string', gs1128: true, nfc: true };

describe.each(testDialects())('print jobs with every carrier (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;
  let dev: HttpPrintDevice;
  beforeAll(async () => void ({ t, admin, dev } = await startJobFloor(dialect)));
  afterAll(() => t?.close());

  /** A ready product with registered serials (any AI (21) serial). */
  async function registered(serials: string[]) {
    const p = await journey(t.call, admin, 1);
    const r = await t.call('POST', '/api/v2/carriers/batch', {
      key: admin,
      body: { productId: p.productId, serials },
    });
    expect(r.status, r.text).toBe(201);
    return p;
  }
  const createJob = (gtin: string, serial: string, labelTemplate: Record<string, unknown> = {}) =>
    t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin, serial, labelTemplate } });
  const claimsOf = (c: ClaimedJob) =>
    AidcEnvelopeClaimsSchema.parse(
      JSON.parse(Buffer.from(c.envelope.split('.')[1]!, 'base64url').toString()),
    );

  it('names an SGTIN-198 EPC in the job and the envelope, with sgtin96Epc null, and seals it', async () => {
    const serial = 'LOT7/A%1';
    const p = await registered([serial]);
    const job = await createJob(p.gtin, serial);
    expect(job.status, job.text).toBe(201);
    const epc = encodeSgtin198({ gtin: p.gtin, serial, filter: 1, companyPrefixLength: 7 }).hex;
    expect(job.body.data).toMatchObject({ sgtin96Epc: null, epc: { scheme: 'sgtin-198', hex: epc } });
    expect(job.body.data.digitalLink).toMatch(/\/21\/LOT7%2FA%251$/);

    const c = (await dev.claim())!;
    const claims = claimsOf(c);
    expect(claims.sgtin96_epc).toBeNull();
    expect(claims.epc).toEqual({ scheme: 'sgtin-198', hex: epc });
    expect(decodeLabelEpc(claims.epc!.hex)).toMatchObject({ gtin: p.gtin, serial });

    // An SGTIN-96 of another serial, or the right EPC in sgtin96Epc's place, is refused.
    const e = dev.evidence(c);
    const wrong = await dev.result(c, 'RENDERED', {
      render_manifest: { ...e.render_manifest, carriers: undefined },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details).toMatchObject({ field: 'evidence.render_manifest.carriers', got: null });
    await dev.seal(c);
    const sealed = await t.call('GET', `/api/v2/aidc/jobs/${c.jobRef}`, { key: admin });
    expect(sealed.body.data.state).toBe('SEALED');
    // The sealed label resolves by its escaped serial.
    const r = await t.call('GET', `/01/${p.gtin}/21/LOT7%2FA%251`);
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe(`/p/${p.productId}?serial=${encodeURIComponent(serial)}`);
    const proof = await t.call('GET', `/api/v2/public/labels/${p.gtin}/${encodeURIComponent(serial)}/proof`);
    expect(proof.status, proof.text).toBe(200);
  });

  it('keeps SGTIN-96 jobs as they were: sgtin96Epc and epc name the same EPC', async () => {
    const p = await journey(t.call, admin, 1);
    const job = await createJob(p.gtin, p.serials[0]!);
    const hex = encodeSgtin96({ gtin: p.gtin, serial: p.serials[0]!, filter: 1, companyPrefixLength: 7 }).hex;
    expect(job.body.data).toMatchObject({ sgtin96Epc: hex, epc: { scheme: 'sgtin-96', hex } });
    const c = (await dev.claim())!;
    expect(claimsOf(c)).toMatchObject({ sgtin96_epc: hex, epc: { scheme: 'sgtin-96', hex } });
    await dev.seal(c);
  });

  it('validates the template carriers', async () => {
    const p = await journey(t.call, admin, 1);
    for (const labelTemplate of [{ dataMatrix: 'gs1' }, { gs1128: 'yes' }, { nfc: 1 }]) {
      const r = await createJob(p.gtin, p.serials[0]!, labelTemplate);
      expect(r.status, JSON.stringify(labelTemplate)).toBe(400);
      expect(r.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('gives an NFC label only to a printer with an NFC encoder', async () => {
    const p = await journey(t.call, admin, 1);
    const job = await createJob(p.gtin, p.serials[0]!, { nfc: true });
    expect(job.status, job.text).toBe(201);
    expect(await dev.claim('zebra-1', true)).toBeNull();
    expect(await dev.claim('zebra-1', true, false)).toBeNull();
    const c = (await dev.claim('zebra-1', true, true))!;
    expect(c.jobRef).toBe(job.body.data.jobRef);
    await dev.seal(c);
  });

  it('seals a label with every carrier only when each one is proven', async () => {
    const serial = 'ALL-1';
    const p = await registered([serial]);
    const job = await createJob(p.gtin, serial, ALL_CARRIERS);
    expect(job.status, job.text).toBe(201);
    expect(job.body.data.labelTemplate).toMatchObject(ALL_CARRIERS);
    const c = (await dev.claim('zebra-1', true, true))!;
    expect(claimsOf(c).label_template).toMatchObject(ALL_CARRIERS);
    const e = dev.evidence(c);
    const hex = encodeSgtin198({ gtin: p.gtin, serial, filter: 1, companyPrefixLength: 7 }).hex;
    const element = gs1ElementString(p.gtin, serial);
    expect(e.render_manifest.carriers).toEqual([
      { type: 'qr', data: c.job.digitalLink },
      { type: 'datamatrix', content: 'element-string', data: element },
      { type: 'gs1-128', data: element },
      { type: 'rfid', scheme: 'sgtin-198', epc: hex },
      { type: 'nfc', uri: c.job.digitalLink },
    ]);

    const refusedAt = async (status: string, evidence: Record<string, unknown>, field: string) => {
      const r = await dev.result(c, status, evidence);
      expect(r.status, r.text).toBe(422);
      expect(r.body.error.details.field).toBe(field);
    };
    const m = e.render_manifest;
    const carriers = m.carriers!;
    // RENDERED: a carrier missing, one with other content, or none listed.
    await refusedAt(
      'RENDERED',
      { render_manifest: { ...m, carriers: carriers.slice(0, 4) } },
      'evidence.render_manifest.carriers',
    );
    await refusedAt(
      'RENDERED',
      {
        render_manifest: {
          ...m,
          carriers: carriers.map((x) =>
            x.type === 'gs1-128' ? { ...x, data: gs1ElementString(p.gtin, 'ALL-2') } : x,
          ),
        },
      },
      'evidence.render_manifest.carriers',
    );
    await refusedAt(
      'RENDERED',
      { render_manifest: { ...m, carriers: undefined } },
      'evidence.render_manifest.carriers',
    );
    // In another order it is the same label.
    const rendered = await dev.result(c, 'RENDERED', {
      render_manifest: { ...m, carriers: [...carriers].reverse() },
    });
    expect(rendered.status, rendered.text).toBe(200);
    const steps = await dev.steps(c, { ...e, render_manifest: { ...m, carriers: [...carriers].reverse() } });
    const [, spool] = steps.find(([s]) => s === 'SPOOL_SUBMITTED')!;
    expect((await dev.result(c, 'SPOOL_SUBMITTED', spool)).status).toBe(200);
    // PRINTED_ATTESTED: an NFC read-back of another link.
    await refusedAt(
      'PRINTED_ATTESTED',
      { attestation: { ...e.attestation, nfcReadBack: 'https://evil.example/01/1/21/1' } },
      'evidence.attestation.nfcReadBack',
    );
    const [, attested] = steps.find(([s]) => s === 'PRINTED_ATTESTED')!;
    expect((await dev.result(c, 'PRINTED_ATTESTED', attested)).status).toBe(200);
    // SCAN_VERIFIED: the DataMatrix not read back, or a symbol the label does not carry.
    const s = e.scan_result;
    await refusedAt(
      'SCAN_VERIFIED',
      { scan_result: { ...s, carriers: s.carriers!.filter((x) => x.type !== 'datamatrix') } },
      'evidence.scan_result.carriers',
    );
    await refusedAt(
      'SCAN_VERIFIED',
      {
        scan_result: {
          ...s,
          carriers: [
            ...s.carriers!,
            { type: 'datamatrix', content: 'digital-link', data: c.job.digitalLink },
          ],
        },
      },
      'evidence.scan_result.carriers',
    );
    await refusedAt(
      'SCAN_VERIFIED',
      { scan_result: { ...s, carriers: undefined } },
      'evidence.scan_result.carriers',
    );
    await dev.seal(c, {
      from: 'SCAN_VERIFIED',
      e: { ...e, render_manifest: { ...m, carriers: [...carriers].reverse() } },
    });
    const sealed = await t.call('GET', `/api/v2/aidc/jobs/${c.jobRef}`, { key: admin });
    expect(sealed.body.data.state).toBe('SEALED');
  });

  it('does not seal an NFC label whose tag was never read back', async () => {
    const p = await journey(t.call, admin, 1);
    const job = await createJob(p.gtin, p.serials[0]!, { nfc: true });
    expect(job.status).toBe(201);
    const c = (await dev.claim('zebra-1', true, true))!;
    const e = dev.evidence(c);
    const { nfcReadBack: _dropped, ...attestation } = e.attestation;
    const without = { ...e, attestation };
    await dev.seal(c, { until: 'SCAN_VERIFIED', e: without });
    const [, sealing] = (await dev.steps(c, without)).find(([s]) => s === 'SEALED')!;
    const r = await dev.result(c, 'SEALED', sealing);
    expect(r.status, r.text).toBe(422);
    expect(r.body.error.details).toMatchObject({ field: 'evidence.attestation.nfcReadBack', got: null });
  });

  it('applies the same carrier checks to a batch of results', async () => {
    const serials = ['B-1', 'B-2'];
    const p = await registered(serials);
    for (const serial of serials) expect((await createJob(p.gtin, serial, ALL_CARRIERS)).status).toBe(201);
    const [good, bad] = await dev.claimMany([{ name: 'zebra-1', rfid: true, nfc: true, count: 2 }]);
    const goodSteps = await dev.steps(good!);
    const e = dev.evidence(bad!);
    const badSteps = await dev.steps(bad!, {
      ...e,
      scan_result: {
        ...e.scan_result,
        carriers: e.scan_result.carriers!.filter((x) => x.type !== 'gs1-128'),
      },
    });
    const r = await dev.results([
      ...goodSteps.map(([status, evidence]) => ({ c: good!, status, evidence, key: randomUUID() })),
      ...badSteps.map(([status, evidence]) => ({ c: bad!, status, evidence, key: randomUUID() })),
    ]);
    expect(r.status, r.text).toBe(200);
    const answers = r.body.data as { status: number; error?: { details?: { field?: string } } }[];
    expect(answers.slice(0, goodSteps.length).every((a) => a.status === 200)).toBe(true);
    const refused = answers.slice(goodSteps.length).find((a) => a.status !== 200);
    expect(refused?.status).toBe(422);
    expect(refused?.error?.details?.field).toBe('evidence.scan_result.carriers');
  });
});
