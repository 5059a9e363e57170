/**
 * The scale path, natively (Docker is not on this machine): two control-plane replicas on one PostgreSQL schema
 * and the Mosquitto the repository ships, an agent with a simulated RFID printer talking to one replica while
 * jobs are created through the other; the replica that took the jobs stops mid-run. Every label ends SEALED,
 * none printed twice, and the workers of the surviving replica carry the rest: every print.confirmed webhook
 * arrives (outbox, webhook deliveries), and a passport is generated through it (generation). The agent is on the
 * broker with the login the control plane administers for it (dynamic security).
 */
import mqtt from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { httpCaller } from '@dpp/control-plane';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { generated, readyProduct } from '@dpp/testkit/passports';
import { startFloor, type Floor } from '../agent/support/floor.js';
import {
  printableProduct,
  queueJobs,
  subscribeWebhook,
  webhookReceiver,
  type WebhookReceiver,
} from '../agent/support/journey.js';
import { checkOutcomes, waitFinished } from '../agent/support/outcomes.js';
import { type ShippedBroker, startShippedBroker } from './support/shipped-broker.js';

const LABELS = 40;
const PRINTER = 'zebra-replicas';

describe.skipIf(!process.env.TEST_DATABASE_URL)('two replicas, one PostgreSQL, the shipped Mosquitto', () => {
  let broker: ShippedBroker | null = null;
  let t: TestControlPlane | null = null;
  let floor: Floor | null = null;
  let hooks: WebhookReceiver | null = null;
  afterAll(async () => {
    await floor?.close();
    await t?.close();
    await hooks?.close();
    await broker?.close();
  });

  it(
    'seals every label once when the replica that took the jobs stops mid-run; the other one carries its work',
    { timeout: 300_000 },
    async () => {
      broker = await startShippedBroker();
      t = await startTestControlPlane({
        dialect: 'postgres',
        env: {
          MQTT_URL: broker.controlPlaneUrl,
          MQTT_DEVICE_AUTH: 'dynamic-security',
          MQTT_DEVICE_SECRET: 'topology-test-device-secret-0123456789',
          AIDC_LEASE_SECONDS: '12',
          AIDC_REAPER_INTERVAL_MS: '250',
        },
      });
      const second = await t.replica();
      // The same workspace seen through the second replica: what the agent and the checks talk to.
      const viaSecond: TestControlPlane = { ...t, url: second.url, call: httpCaller(second.url) };
      const key = t.tenants.a.admin;
      hooks = await webhookReceiver();
      await subscribeWebhook(t, key, hooks.url, ['print.confirmed']);
      const product = await printableProduct(t, key, LABELS);
      floor = await startFloor(viaSecond, key, { printers: [{ name: PRINTER, rfid: true }] });
      const sim = floor.printers[PRINTER]!;
      // The agent is on the broker with its own login: its retained presence says online.
      const watcher = await mqtt.connectAsync(broker.url, {
        username: 'control-plane',
        password: broker.secrets.MQTT_CONTROL_PLANE_PASSWORD,
        reconnectPeriod: 0,
      });
      const presence = `dpp/${floor.identity.tenantId}/devices/${floor.identity.deviceId}/presence`;
      const online = new Promise<unknown>((resolve) =>
        watcher.on('message', (topic, payload) => {
          const p = JSON.parse(payload.toString()) as { status: string };
          if (topic === presence && p.status === 'online') resolve(p);
        }),
      );
      await watcher.subscribeAsync(presence, { qos: 1 });
      await expect(online).resolves.toMatchObject({ status: 'online' });
      await watcher.endAsync(true);

      await queueJobs(t, key, product, { printer: PRINTER }); // through the first replica
      await sim.waitForLabels(LABELS / 4, 120_000);
      await t.cp.close(); // the first replica stops mid-run
      expect((await viaSecond.call('GET', '/readyz')).status).toBe(200);

      await waitFinished(viaSecond, key, product, 240_000);
      const o = await checkOutcomes(viaSecond, key, product, [sim]);
      expect(o.sealed).toHaveLength(LABELS);
      expect([...o.goodLabels.entries()].filter(([, n]) => n !== 1)).toEqual([]);
      // Webhooks for labels sealed after the stop could only come from the second replica's workers.
      await expect
        .poll(
          () =>
            new Set(
              hooks!.bodies
                .filter((b) => b.type === 'print.confirmed')
                .flatMap((b) =>
                  ((b.data as { serials?: { serial: string }[] })?.serials ?? []).map((x) => x.serial),
                )
                .filter((s) => product.serials.includes(s)),
            ).size,
          { timeout: 60_000, interval: 500 },
        )
        .toBe(LABELS);
      // Passport generation runs on the survivor too: a new product's passport is generated through it.
      const fresh = await readyProduct(viaSecond, key, 9100);
      expect((await generated(viaSecond, key, fresh.id)).body).toMatchObject({ status: 'succeeded' });
    },
  );
});
