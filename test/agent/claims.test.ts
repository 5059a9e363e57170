/**
 * The agent's claims against a real control plane: a printer alone claims at once (POST /aidc/jobs/claim);
 * printers that ask while a claim is in flight wait for it and go together in one POST /aidc/jobs/claims,
 * each getting its own claim; a printer the device was not enrolled for is refused alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentError, ControlPlaneClient } from '@dpp/agent';
import { enrollTestDevice, startTestControlPlane, testDialects, type TestControlPlane } from '@dpp/testkit';
import { printableProduct, queueJobs } from './support/journey.js';

describe.each(testDialects())('the agent claims for its printers (%s)', (dialect) => {
  let t: TestControlPlane;
  let client: ControlPlaneClient;
  const paths: string[] = [];
  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    const device = await enrollTestDevice(t, t.tenants.a.admin, { printerNames: ['p-1', 'p-2', 'p-3'] });
    const tokens = { token: () => device.accessToken(), invalidate: () => undefined };
    const counting: typeof fetch = (url, init) => {
      paths.push(new URL(String(url)).pathname);
      return fetch(url, init);
    };
    client = new ControlPlaneClient({ baseUrl: t.url, tokens, timeoutMs: 5000, fetch: counting });
  });
  afterAll(() => t?.close());

  const queue = async (n: number) =>
    queueJobs(t, t.tenants.a.admin, await printableProduct(t, t.tenants.a.admin, n));

  const claimPaths = () => paths.filter((p) => p.startsWith('/api/v2/aidc/jobs/claim'));

  it('sends the claims that wait for one in flight together, each to its own printer', async () => {
    await queue(4);
    paths.length = 0;
    const printer = (name: string) => ({ name, rfid: true });
    const claims = await Promise.all([
      client.claim(printer('p-1')),
      client.claim(printer('p-2')),
      client.claim(printer('p-3')),
      client.claim(printer('p-2')),
    ]);
    // The first alone, the three that asked while it was in flight in one call.
    expect(claimPaths()).toEqual(['/api/v2/aidc/jobs/claim', '/api/v2/aidc/jobs/claims']);
    expect(claims.every((c) => c !== null)).toBe(true);
    expect(new Set(claims.map((c) => c!.job.jobRef)).size).toBe(4);
    expect(new Set(claims.map((c) => c!.attemptId)).size).toBe(4);
    const printerOf = (envelope: string) =>
      (JSON.parse(Buffer.from(envelope.split('.')[1]!, 'base64url').toString()) as { printer: string })
        .printer;
    expect(claims.map((c) => printerOf(c!.envelope))).toEqual(['p-1', 'p-2', 'p-3', 'p-2']);

    // No work left: each printer hears so.
    await expect(Promise.all([client.claim(printer('p-1')), client.claim(printer('p-3'))])).resolves.toEqual([
      null,
      null,
    ]);
  });

  it('refuses a printer the device was not enrolled for alone; the others still claim', async () => {
    await queue(2);
    const answers = await Promise.allSettled([
      client.claim({ name: 'p-1', rfid: true }),
      client.claim({ name: 'p-9', rfid: true }),
      client.claim({ name: 'p-2', rfid: true }),
    ]);
    expect(answers[0]).toMatchObject({ status: 'fulfilled', value: { job: expect.any(Object) } });
    expect(answers[2]).toMatchObject({ status: 'fulfilled', value: { job: expect.any(Object) } });
    expect(answers[1]!.status).toBe('rejected');
    const err = (answers[1] as PromiseRejectedResult).reason as AgentError;
    expect(err).toBeInstanceOf(AgentError);
    expect(err).toMatchObject({ status: 403, apiCode: 'FORBIDDEN' });
  });
});
