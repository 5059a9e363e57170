import { describe, expect, it } from 'vitest';
import {
  RenderManifestSchema,
  ZplLabelBuilder,
  buildDigitalLink,
  gs1ElementsToRaw,
  zplDataMatrixData,
  zplGs1128Data,
  type AidcEnvelopeClaims,
  type LabelTemplate,
} from '@dpp/shared';
import { ZebrashRenderer } from '@dpp/firmware-sim';
import { claimsFor } from '@dpp/testkit/agent';
import { isAgentError } from '../errors.js';
import { renderLabel } from './render-label.js';
import { decodeSymbolsPng, proveSymbolPng, symbolCarrier, symbolPng } from './symbols.js';
import { effectiveTemplate } from './template.js';
import { renderZplLabel } from './zpl.js';

const zebra = { language: 'zpl' as const, dpi: 203 as const, rfid: true, template: {} };
const pdf = { language: 'pdf' as const, dpi: 300 as const, rfid: false, template: {} };
const GS = '\x1d';

/** Claims for any set-82 serial (no RFID: SGTIN-96 holds numeric serials only). */
function claimsWith(serial: string, template: Partial<LabelTemplate>): AidcEnvelopeClaims {
  const base = claimsFor('1');
  return {
    ...base,
    serial,
    digital_link: buildDigitalLink('https://id.example.com', base.gtin, serial),
    label_template: { ...base.label_template, rfid: false, ...template },
  };
}

const logistics = { widthMm: 100, heightMm: 60 };

describe('a label with a DataMatrix and a GS1-128 (ZPL)', () => {
  it('carries the Digital Link in a DataMatrix beside the QR and lists every carrier as decoded', async () => {
    const claims = claimsFor('7001', {
      label_template: { ...claimsFor('1').label_template, dataMatrix: 'digital-link' },
    });
    const r = await renderLabel(claims, zebra);
    const zpl = r.payload.toString('utf8');
    expect(zpl).toMatch(/\^BXN,4,200,,,,_\^FDhttps:\/\/id\.example\.com\/01\/\d{14}\/21\/7001\^FS/);
    expect(zplDataMatrixData(zpl)).toEqual({ gs1: false, data: claims.digital_link });
    expect(RenderManifestSchema.parse(r.manifest).carriers).toEqual([
      { type: 'qr', data: claims.digital_link },
      { type: 'datamatrix', content: 'digital-link', data: claims.digital_link },
      { type: 'rfid', scheme: 'sgtin-96', epc: claims.sgtin96_epc },
    ]);
  });

  it('prints the element string in a GS1 DataMatrix and a GS1-128 with their human-readable lines', async () => {
    const serial = 'A(1)>2_b';
    const claims = claimsWith(serial, { ...logistics, dataMatrix: 'element-string', gs1128: true });
    const r = await renderLabel(claims, { ...zebra, rfid: false });
    const zpl = r.payload.toString('utf8');
    const raw = gs1ElementsToRaw([
      { ai: '01', value: claims.gtin },
      { ai: '21', value: serial },
    ]);
    expect(zplDataMatrixData(zpl)).toEqual({ gs1: true, data: raw });
    expect(zplGs1128Data(zpl)).toMatchObject({ gs1: true, data: raw });
    const hri = `(01)${claims.gtin}(21)${serial}`;
    // The human-readable line under each symbol (^FH-escaped: _ travels as _5F).
    expect(zpl.split(`^FD(01)${claims.gtin}(21)A(1)>2_5Fb^FS`)).toHaveLength(3);
    expect(r.manifest.carriers).toEqual([
      { type: 'qr', data: claims.digital_link },
      { type: 'datamatrix', content: 'element-string', data: hri },
      { type: 'gs1-128', data: hri },
    ]);
  });

  it('refuses a label too small for its GS1-128, and puts text beside the QR as a printer draws it (byte mode)', async () => {
    const claims = claimsWith('12345678', { gs1128: true });
    const t = effectiveTemplate(claims, zebra);
    expect(() => renderZplLabel(claims, t)).toThrow(expect.objectContaining({ code: 'TEMPLATE_TOO_SMALL' }));
    const plain = claimsFor('7002');
    const zpl = renderZplLabel(plain, effectiveTemplate(plain, zebra)).zpl;
    expect(zpl).toContain('^FO12,12^BQN,2,4');
    expect(zpl).toContain('^FO156,12^A0N,20,20^FH_^FDDemo product^FS');
  });

  it('fails the render when the symbol a printer would draw is not the job data', async () => {
    const claims = claimsFor('7003');
    const other = claimsFor('7004');
    const zpl = new ZplLabelBuilder()
      .dataMatrix(0, 0, { text: other.digital_link }, { moduleDots: 4 })
      .toString();
    const png = await symbolPng('datamatrix', zplDataMatrixData(zpl)!, { scale: 4 });
    await expect(
      proveSymbolPng(png, { type: 'datamatrix', content: 'digital-link', data: claims.digital_link }),
    ).rejects.toSatisfy((e) => isAgentError(e, 'SYMBOL_MISMATCH'));
    // A GS1 DataMatrix is no plain one, even with the same characters.
    const gs1 = await symbolPng('datamatrix', { gs1: true, data: `0110950600830521217004` }, { scale: 4 });
    await expect(
      proveSymbolPng(gs1, { type: 'datamatrix', content: 'digital-link', data: '0110950600830521217004' }),
    ).rejects.toSatisfy((e) => isAgentError(e, 'SYMBOL_MISMATCH'));
  });
});

describe('a PDF label with every symbol', () => {
  it('places bwip-js images that decode to the job data, QR still by qrcode', async () => {
    const claims = claimsWith('X-9', { ...logistics, dataMatrix: 'element-string', gs1128: true });
    const r = await renderLabel(claims, pdf);
    expect(r.manifest.carriers).toEqual([
      { type: 'qr', data: claims.digital_link },
      { type: 'datamatrix', content: 'element-string', data: `(01)${claims.gtin}(21)X-9` },
      { type: 'gs1-128', data: `(01)${claims.gtin}(21)X-9` },
    ]);
    expect(r.payload.toString('latin1').match(/\/Subtype \/Image/g)?.length).toBeGreaterThanOrEqual(3);
  });
});

describe('symbols decoded (zxing-wasm)', () => {
  it('names each symbol by its AIM identifier and turns GS1 data into the human-readable form', async () => {
    expect(symbolCarrier({ aimId: ']C1', data: `21A${GS}0110950600830521` })).toEqual({
      type: 'gs1-128',
      data: '(21)A(01)10950600830521',
    });
    expect(symbolCarrier({ aimId: ']C0', data: 'plain' })).toBeNull();
    expect(symbolCarrier({ aimId: ']d2', data: 'not gs1' })).toBeNull();
    expect(symbolCarrier({ aimId: ']d1', data: 'https://x' })).toEqual({
      type: 'datamatrix',
      content: 'digital-link',
      data: 'https://x',
    });
  });
});

/**
 * The oracle: the writer's ^BX and ^BC drawn by an independent ZPL renderer (Zebrash, as the simulator
 * uses it) decode to exactly the data the reader says a printer encodes, and bwip-js's own drawing of
 * that data decodes to the same.
 */
describe('DataMatrix and GS1-128 oracle (Zebrash and bwip-js, decoded by zxing-wasm)', () => {
  const renderer = new ZebrashRenderer();
  const gtin = { ai: '01', value: '10950600830521' };
  it.each(['ABC123', '5', 'a_b', '(1)>2<3', '!"%&\'*+,-./:;=?', '12345678901234567890', 'A>B'])(
    'serial %s',
    async (serial) => {
      const elements = [gtin, { ai: '21', value: serial }];
      const zpl = new ZplLabelBuilder({ widthDots: 800, lengthDots: 400 })
        .dataMatrix(20, 20, { gs1: elements }, { moduleDots: 5 })
        .gs1128(20, 250, elements, { moduleDots: 2, heightDots: 80 })
        .toString();
      const raw = gs1ElementsToRaw(elements);
      const dm = zplDataMatrixData(zpl)!;
      const bc = zplGs1128Data(zpl)!;
      expect(dm).toEqual({ gs1: true, data: raw });
      expect(bc).toMatchObject({ gs1: true, data: raw });
      const label = await decodeSymbolsPng(
        await renderer.render(zpl, { widthDots: 800, lengthDots: 400, dpmm: 8 }),
      );
      const byBwip = [
        ...(await decodeSymbolsPng(await symbolPng('datamatrix', dm, { scale: 4 }))),
        ...(await decodeSymbolsPng(await symbolPng('gs1-128', bc, { scale: 3 }))),
      ];
      const expected = [
        { aimId: ']d2', data: raw },
        { aimId: ']C1', data: raw },
      ];
      expect(byBwip).toEqual(expected);
      // Zebrash drops the one character after an invocation code when it ends the data (`>0x` at the
      // end); a printer does not. Those serials are checked against bwip-js only.
      if (!/>.$/.test(serial))
        expect(label.sort((a, b) => a.aimId.localeCompare(b.aimId))).toEqual(
          expected.sort((a, b) => a.aimId.localeCompare(b.aimId)),
        );
      else expect(label.find((s) => s.aimId === ']d2')).toEqual(expected[0]);
    },
  );

  it('a Digital Link in a plain DataMatrix', async () => {
    const link = 'https://id.example.com/01/10950600830521/21/a_b%2F?17=261231';
    const zpl = new ZplLabelBuilder({ widthDots: 400, lengthDots: 400 })
      .dataMatrix(20, 20, { text: link }, { moduleDots: 5 })
      .toString();
    const label = await decodeSymbolsPng(
      await renderer.render(zpl, { widthDots: 400, lengthDots: 400, dpmm: 8 }),
    );
    expect(label).toEqual([{ aimId: ']d1', data: link }]);
    expect(
      await decodeSymbolsPng(await symbolPng('datamatrix', zplDataMatrixData(zpl)!, { scale: 4 })),
    ).toEqual(label);
  });
});
