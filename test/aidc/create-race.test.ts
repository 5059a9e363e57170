import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  printableProduct as journey,
  startTestControlPlane,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

describe.each(testDialects())('one open print job per serial under concurrent creates (%s)', (dialect) => {
  let t: TestControlPlane;
  let admin: string;

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect });
    admin = t.tenants.a.admin;
  });
  afterAll(() => t.close());

  it('lets one create in and answers every other 409 PRINT_JOB_EXISTS naming it', async () => {
    // On PostgreSQL every create can read "no open job" before any has inserted; before the partial
    // unique index, several of them inserted a job for the same serial.
    const p = await journey(t.call, admin, 3);
    for (const serial of p.serials) {
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          t.call('POST', '/api/v2/aidc/jobs', { key: admin, body: { gtin: p.gtin, serial } }),
        ),
      );
      const created = answers.filter((a) => a.status === 201);
      expect(created, answers.map((a) => a.text).join('\n')).toHaveLength(1);
      const jobRef = created[0]!.body.data.jobRef as string;
      for (const refused of answers.filter((a) => a.status !== 201)) {
        expect(refused.status).toBe(409);
        expect(refused.body.error).toMatchObject({
          code: 'PRINT_JOB_EXISTS',
          details: { jobRef, state: 'QUEUED' },
        });
      }
      const rows = await t.cp.store.db
        .selectFrom('print_jobs')
        .select('job_ref')
        .where('gtin', '=', p.gtin)
        .where('serial', '=', serial)
        .execute();
      expect(rows).toEqual([{ job_ref: jobRef }]);
    }
  });
});
