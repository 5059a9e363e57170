import {
  HttpPrintDevice,
  enrollTestDevice,
  startTestControlPlane,
  type DialectName,
  type TestControlPlane,
} from '@dpp/testkit';

/**
 * A control plane with MQTT, a 30-second lease reaped every 100 ms, and one enrolled print device with
 * printer `zebra-1`: what the print-job tests run against.
 */
export async function startJobFloor(
  dialect: DialectName,
): Promise<{ t: TestControlPlane; admin: string; dev: HttpPrintDevice }> {
  const t = await startTestControlPlane({
    dialect,
    mqtt: true,
    env: { AIDC_LEASE_SECONDS: '30', AIDC_REAPER_INTERVAL_MS: '100' },
  });
  const admin = t.tenants.a.admin;
  const dev = await new HttpPrintDevice(
    t.call,
    await enrollTestDevice(t, admin, { printerNames: ['zebra-1'] }),
  ).init();
  return { t, admin, dev };
}
