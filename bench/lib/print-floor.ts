/**
 * The print loop for benchmarks, over HTTP like an integrator: a product made printable (passport,
 * validation, publish-dpp), serials allocated, jobs queued; a device enrolled with the agent running in
 * this process on simulated printers and scanners.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  computeGs1CheckDigit,
  createProof,
  didKeyFromPublicKey,
  ed25519PrivateKeyFromSeed,
  ed25519RawPublicKey,
  verificationMethodId,
} from '@dpp/shared';
import type { CallResult, TestControlPlane } from '@dpp/testkit';
import { enroll, parseAgentConfig, silentLogger, startAgent, type Agent } from '@dpp/agent';
import { startPrinter, startScanner, type PrinterHandle, type ScannerHandle } from '@dpp/firmware-sim';

function ok(r: CallResult, status: number, what: string): CallResult {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r;
}

export async function printableProduct(
  t: TestControlPlane,
  key: string,
  count: number,
): Promise<{ productId: string; gtin: string; serials: string[] }> {
  const body = `10950601${String(Math.floor(Math.random() * 100_000)).padStart(5, '0')}`;
  const created = ok(
    await t.call('POST', '/api/v2/products', {
      key,
      body: {
        name: 'Bench Phone',
        description: 'A product whose labels measure the device agent',
        category: 'electronics',
        gtin: body + String(computeGs1CheckDigit(body)),
        serialNumber: '1',
        extensions: {
          energyEfficiencyClass: 'A',
          annualEnergyConsumptionKwh: 12,
          repairabilityScore: 7,
          weeeCategory: 'small_it_telecom',
        },
      },
    }),
    201,
    'product',
  );
  const productId = created.body.id as string;
  for (const stage of ['validated', 'ready_for_dpp'])
    ok(
      await t.call('POST', `/api/v2/products/${productId}/lifecycle/transition`, { key, body: { stage } }),
      200,
      stage,
    );
  ok(
    await t.call('POST', '/api/v2/dpp/generate', {
      key,
      body: { productId },
      headers: { Prefer: 'wait=20' },
    }),
    200,
    'generate',
  );
  ok(
    await t.call('POST', `/api/v2/dpp/${productId}/publish`, {
      key,
      body: { amendmentReason: 'Publication for the benchmark' },
    }),
    201,
    'publish',
  );
  ok(
    await t.call('POST', `/api/v2/products/${productId}/publish-dpp`, {
      key,
      body: {},
      headers: { 'Idempotency-Key': randomUUID() },
    }),
    201,
    'publish-dpp',
  );
  const seed = new Uint8Array(32).map(() => Math.floor(Math.random() * 256));
  const did = didKeyFromPublicKey(ed25519RawPublicKey(ed25519PrivateKeyFromSeed(seed)));
  const vc = createProof(
    {
      '@context': ['https://www.w3.org/ns/credentials/v2'],
      type: ['VerifiableCredential'],
      issuer: did,
      validFrom: '2026-01-01T00:00:00Z',
      credentialSubject: { id: `urn:dpp:product:${productId}` },
    },
    { privateKey: seed, verificationMethod: verificationMethodId(did) },
  );
  ok(
    await t.call('POST', `/api/v2/passports/${productId}/validations`, { key, body: { vc } }),
    201,
    'validation',
  );
  const batch = ok(
    await t.call('POST', '/api/v2/carriers/batch', { key, body: { productId, count } }),
    201,
    'carriers',
  );
  return { productId, gtin: batch.body.gtin as string, serials: batch.body.serials as string[] };
}

export async function queueJobs(
  t: TestControlPlane,
  key: string,
  gtin: string,
  serials: string[],
): Promise<void> {
  for (const serial of serials)
    ok(await t.call('POST', '/api/v2/aidc/jobs', { key, body: { gtin, serial } }), 201, `job ${serial}`);
}

export interface BenchFloor {
  agent: Agent;
  printer: PrinterHandle;
  scanner: ScannerHandle;
  close(): Promise<void>;
}

/** One RFID printer and its scanner on ptys paced at `baudRate`, and the agent. */
export async function benchFloor(t: TestControlPlane, key: string, baudRate: number): Promise<BenchFloor> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-bench-floor-'));
  const printer = await startPrinter({ transport: 'pty', baudRate });
  const scanner = await startScanner({ printer, transport: 'pty', baudRate });
  const token = ok(
    await t.call('POST', '/api/v2/devices/enrollment-tokens', { key, body: {} }),
    201,
    'enrollment token',
  );
  const dataDir = path.join(dir, 'data');
  await enroll({ url: t.url, token: token.body.data.token as string, dataDir });
  const agent = await startAgent(
    parseAgentConfig({
      dataDir,
      console: { host: '127.0.0.1', port: 0, enabled: true },
      printers: [
        {
          name: 'bench-1',
          language: 'zpl',
          rfid: true,
          transport: { type: 'serial', path: printer.path!, baudRate },
          scanner: { link: { type: 'serial', path: scanner.path!, baudRate }, readsRfid: true },
        },
      ],
    }),
    { log: silentLogger },
  );
  return {
    agent,
    printer,
    scanner,
    close: async () => {
      await agent.stop({ drainMs: 0 });
      await scanner.close();
      await printer.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
