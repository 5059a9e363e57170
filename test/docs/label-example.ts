/**
 * Renders the example label of the README's template reference: one label with every printed carrier (QR,
 * GS1 DataMatrix with the element string, GS1-128) and an RFID tag, through the agent's own render and
 * proof (`renderLabel`) and printed by the simulated printer (firmware-sim, Zebrash), whose output is saved
 * as `docs/images/label-all-carriers.png`. Run: `npm run label-example [-- <out.png>]`.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderLabel } from '@dpp/agent';
import { openHostLink, startPrinter } from '@dpp/firmware-sim';
import { claimsFor } from '@dpp/testkit/agent';

const here = path.dirname(fileURLToPath(import.meta.url));
export const EXAMPLE_LABEL_PNG = path.resolve(here, '../../docs/images/label-all-carriers.png');

/** The example job: a 100 x 60 mm label at 203 dpi with every carrier the template can choose. */
export function exampleClaims() {
  const base = claimsFor('4711');
  return {
    ...base,
    label_template: {
      ...base.label_template,
      id: 'all-carriers',
      widthMm: 100,
      heightMm: 60,
      textLines: ['Phone X', 'Repairable smartphone', 'SN {serial}'],
      rfid: true,
      dataMatrix: 'element-string' as const,
      gs1128: true,
      nfc: true,
    },
  };
}

/** Prints the example label on a simulated printer and returns the PNG of what came out. */
export async function exampleLabelPng(): Promise<{ png: Buffer; zpl: string }> {
  const claims = exampleClaims();
  const rendered = await renderLabel(claims, { language: 'zpl', dpi: 203, rfid: true, template: {} });
  const printer = await startPrinter({ transport: 'tcp', port: 0, rfid: true });
  try {
    const link = await openHostLink({ port: printer.port! });
    try {
      await link.write(rendered.payload);
      const [label] = await printer.waitForLabels(1, 20_000);
      return { png: label!.png, zpl: rendered.payload.toString('utf8') };
    } finally {
      await link.close();
    }
  } finally {
    await printer.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = path.resolve(process.argv[2] ?? EXAMPLE_LABEL_PNG);
  const { png, zpl } = await exampleLabelPng();
  await writeFile(out, png);
  console.log(zpl);
  console.log(`wrote ${out}`);
}
