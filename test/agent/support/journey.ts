/**
 * The integrator's side of the print loop, over HTTP only: a product taken through its passport
 * (ready_for_dpp, generate, publish, publish-dpp, an anchored validation: readyToPrint), serials
 * allocated, print jobs queued; plus what the tests read back (jobs, the re-print file, EPCIS events) and a
 * webhook receiver.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import {
  type CallResult,
  type PrintableProduct,
  type TestControlPlane,
  printableProduct as journey,
} from '@dpp/testkit';

export { freshGtin, type PrintableProduct } from '@dpp/testkit';

/** A JSON value read back from the API, navigated freely in assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

function ok(r: CallResult, status: number, what: string): CallResult {
  expect(r.status, `${what}: ${r.text}`).toBe(status);
  return r;
}

/** The integrator's journey to printable serials, shared with the control plane's own tests and benches. */
export async function printableProduct(
  t: TestControlPlane,
  key: string,
  count: number,
): Promise<PrintableProduct> {
  return journey(t.call, key, count);
}

/** POST /aidc/jobs for each serial; the job refs in order. */
export async function queueJobs(
  t: TestControlPlane,
  key: string,
  p: PrintableProduct,
  extra: Record<string, unknown> = {},
): Promise<string[]> {
  const refs: string[] = [];
  for (const serial of p.serials) {
    const r = ok(
      await t.call('POST', '/api/v2/aidc/jobs', { key, body: { gtin: p.gtin, serial, ...extra } }),
      201,
      `job ${serial}`,
    );
    refs.push(r.body.data.jobRef as string);
  }
  return refs;
}

export interface JobRow {
  jobRef: string;
  state: string;
  serial: string;
  attemptCount: number;
  lastError: string | null;
}

/** Every job of the tenant (all pages). */
export async function allJobs(t: TestControlPlane, key: string): Promise<JobRow[]> {
  const out: JobRow[] = [];
  let cursor: string | null = null;
  do {
    const r = ok(
      await t.call('GET', `/api/v2/aidc/jobs?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key }),
      200,
      'jobs',
    );
    out.push(...(r.body.data as JobRow[]));
    cursor = r.body.hasMore ? (r.body.nextCursor as string) : null;
  } while (cursor);
  return out;
}

/** GET /aidc/jobs/{ref} with attempts and evidence. */
export async function jobDetail(
  t: TestControlPlane,
  key: string,
  ref: string,
): Promise<Record<string, Json>> {
  return ok(await t.call('GET', `/api/v2/aidc/jobs/${ref}`, { key }), 200, `job ${ref}`).body.data;
}

/** The carriers export as JSON rows, optionally narrowed to a print state (failed = the re-print file). */
export async function exportRows(
  t: TestControlPlane,
  key: string,
  productId: string,
  printState?: 'printed' | 'failed' | 'pending',
): Promise<Array<Record<string, string>>> {
  const q = `productId=${productId}&format=json${printState ? `&printState=${printState}` : ''}`;
  const r = ok(await t.call('GET', `/api/v2/carriers/export?${q}`, { key }), 200, 'export');
  return (Array.isArray(r.body) ? r.body : (r.body.data ?? r.body.rows)) as Array<Record<string, string>>;
}

/** Every EPCIS event of the tenant with this bizStep (all pages). */
export async function epcisEvents(
  t: TestControlPlane,
  key: string,
  bizStep?: string,
): Promise<Array<Record<string, Json>>> {
  const out: Array<Record<string, Json>> = [];
  let path: string | null =
    `/api/v2/epcis/events?perPage=200${bizStep ? `&bizStep=${encodeURIComponent(bizStep)}` : ''}`;
  while (path) {
    const r = ok(await t.call('GET', path, { key }), 200, 'epcis');
    out.push(...(r.body.epcisBody.queryResults.resultsBody.eventList as Array<Record<string, Json>>));
    const link = r.headers.get('link');
    path = link ? /<([^>]+)>/.exec(link)![1]! : null;
  }
  return out;
}

export interface WebhookReceiver {
  url: string;
  /** Parsed bodies received, in order. */
  bodies: Array<Record<string, Json>>;
  close(): Promise<void>;
}

/** A local endpoint that answers 200 to every delivery and keeps the bodies. */
export async function webhookReceiver(): Promise<WebhookReceiver> {
  const bodies: Array<Record<string, Json>> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, Json>);
      } catch {
        // not JSON: ignored
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function subscribeWebhook(
  t: TestControlPlane,
  key: string,
  url: string,
  events: string[],
): Promise<void> {
  ok(await t.call('POST', '/api/v2/webhooks', { key, body: { url, events } }), 201, 'webhook');
}
