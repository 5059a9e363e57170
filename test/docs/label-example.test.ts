/** The README's example label: the committed picture shows every printed carrier, each decoding to the job. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { gs1ElementString, gs1HriToRaw } from '@dpp/shared';
import { decodeSymbolsPng } from '@dpp/firmware-sim';
import { EXAMPLE_LABEL_PNG, exampleClaims, exampleLabelPng } from './label-example.js';

describe('docs/images/label-all-carriers.png', () => {
  it('carries the QR, the GS1 DataMatrix and the GS1-128 of the example job, as printing it again does', async () => {
    const claims = exampleClaims();
    const raw = gs1HriToRaw(gs1ElementString(claims.gtin, claims.serial));
    const expected = [
      { aimId: ']Q1', data: claims.digital_link },
      { aimId: ']d2', data: raw },
      { aimId: ']C1', data: raw },
    ];
    const symbols = async (png: Buffer) =>
      (await decodeSymbolsPng(png)).map(({ aimId, data }) => ({ aimId, data }));
    expect(await symbols(await readFile(EXAMPLE_LABEL_PNG))).toEqual(expected);
    expect(await symbols((await exampleLabelPng()).png)).toEqual(expected);
  }, 60_000);
});
