/**
 * The invariant of every run and drill: each serial ends SEALED (printed, with its evidence) or in the
 * re-print file (DEAD_LETTER, print state failed), never both, never lost, never sealed twice; and what
 * the printer physically printed decodes to the right links.
 */
import { expect } from 'vitest';
import { decodeQrPng, type PrinterHandle } from '@dpp/firmware-sim';
import type { TestControlPlane } from '@dpp/testkit';
import { allJobs, exportRows, type JobRow, type PrintableProduct } from './journey.js';

export interface Outcomes {
  jobs: Map<string, JobRow>;
  sealed: string[];
  deadLettered: string[];
  /** Readable (non-VOID, decodable) labels per serial, from every printer. */
  goodLabels: Map<string, number>;
}

const SERIAL_OF_LINK = /\/21\/([^/?#]+)/;

export async function checkOutcomes(
  t: TestControlPlane,
  key: string,
  product: PrintableProduct,
  printers: PrinterHandle[],
): Promise<Outcomes> {
  const rows = (await allJobs(t, key)).filter((j) => product.serials.includes(j.serial));
  const jobs = new Map<string, JobRow>();
  for (const j of rows) {
    expect(jobs.has(j.serial), `one job per serial (${j.serial})`).toBe(false);
    jobs.set(j.serial, j);
  }
  expect([...jobs.keys()].sort()).toEqual([...product.serials].sort());
  const sealed = rows.filter((j) => j.state === 'SEALED').map((j) => j.serial);
  const deadLettered = rows.filter((j) => j.state === 'DEAD_LETTER').map((j) => j.serial);
  expect(
    sealed.length + deadLettered.length,
    `every job finished: ${JSON.stringify(rows.filter((j) => j.state !== 'SEALED' && j.state !== 'DEAD_LETTER'))}`,
  ).toBe(product.serials.length);

  const printed = (await exportRows(t, key, product.productId, 'printed')).map((r) => r.serial);
  const reprint = (await exportRows(t, key, product.productId, 'failed')).map((r) => r.serial);
  expect(printed.sort()).toEqual([...sealed].sort());
  expect(reprint.sort()).toEqual([...deadLettered].sort());

  const goodLabels = new Map<string, number>();
  for (const p of printers) {
    for (const label of p.labels) {
      if (label.void) continue;
      const data = decodeQrPng(label.png)?.data;
      if (!data) continue; // smudged
      const serial = SERIAL_OF_LINK.exec(data)?.[1];
      expect(
        serial && product.serials.includes(serial),
        `label ${label.index} carries a link of this product: ${data}`,
      ).toBe(true);
      goodLabels.set(serial!, (goodLabels.get(serial!) ?? 0) + 1);
    }
  }
  for (const s of sealed)
    expect(goodLabels.get(s) ?? 0, `a readable label for sealed serial ${s}`).toBeGreaterThanOrEqual(1);
  return { jobs, sealed, deadLettered, goodLabels };
}

/** Polls the control plane until every job of the product is SEALED or DEAD_LETTER. */
export async function waitFinished(
  t: TestControlPlane,
  key: string,
  product: PrintableProduct,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let open: JobRow[] = [];
  while (Date.now() < deadline) {
    const rows = (await allJobs(t, key)).filter((j) => product.serials.includes(j.serial));
    open = rows.filter((j) => j.state !== 'SEALED' && j.state !== 'DEAD_LETTER');
    if (rows.length === product.serials.length && open.length === 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`jobs still open after ${timeoutMs} ms: ${JSON.stringify(open)}`);
}

/** The failure reasons of every attempt of the product's retried jobs (for assertions and messages). */
export async function failureReasons(t: TestControlPlane, key: string, o: Outcomes): Promise<string[]> {
  const reasons: string[] = [];
  for (const j of o.jobs.values()) {
    if (j.attemptCount < 2) continue;
    const r = await t.call('GET', `/api/v2/aidc/jobs/${j.jobRef}`, { key });
    for (const a of r.body.data.attempts as Array<{ failureReason: string | null }>)
      if (a.failureReason) reasons.push(a.failureReason);
  }
  return reasons.sort();
}
