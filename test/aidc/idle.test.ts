import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  HttpPrintDevice,
  enrollTestDevice,
  printableProduct,
  startTestControlPlane,
  testDialects,
  type TestControlPlane,
} from '@dpp/testkit';

/**
 * The embedded default once wedged for good about a minute after start: the claim signs its envelope
 * inside its transaction, and after 60 s the keyring re-read its keys through the root handle, which on
 * SQLite waits forever for the connection the transaction holds. The control plane's clock is moved past
 * every lifetime it keeps (signing keys, rate windows, last-used writes, leases) between two claims.
 */
describe.each(testDialects())('a control plane left idle past every cache lifetime (%s)', (dialect) => {
  let t: TestControlPlane;
  let offset = 0;

  beforeAll(async () => {
    t = await startTestControlPlane({ dialect, now: () => Date.now() + offset });
  });
  afterAll(() => t.close());

  it('still claims, seals and answers /readyz after the clock moved on by 65 s, then 10 min', async () => {
    const admin = t.tenants.a.admin;
    const product = await printableProduct(t.call, admin, 3);
    for (const serial of product.serials) {
      const r = await t.call('POST', '/api/v2/aidc/jobs', {
        key: admin,
        body: { gtin: product.gtin, serial },
      });
      expect(r.status, r.text).toBe(201);
    }
    const dev = await new HttpPrintDevice(t.call, await enrollTestDevice(t, admin)).init();
    for (const idle of [0, 65_000, 600_000]) {
      offset += idle;
      const claimed = await dev.claim();
      expect(claimed, `claim after ${idle} ms idle`).not.toBeNull();
      await dev.seal(claimed!);
      const ready = await t.call('GET', '/readyz');
      expect(ready.status).toBe(200);
    }
  });
});
