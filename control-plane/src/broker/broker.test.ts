import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopics, WorkNoticeSchema } from '@dpp/shared';
import { enqueueOutbox } from '../outbox/index.js';
import {
  enrollTestDevice,
  startTestControlPlane,
  type EnrolledTestDevice,
  type TestControlPlane,
} from '@dpp/testkit';
import { WORK_NOTICE_TOPIC } from './notices.js';

const clients: MqttClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
});

async function connect(url: string, username: string, password: string): Promise<MqttClient> {
  const c = await mqtt.connectAsync(url, { username, password, reconnectPeriod: 0, connectTimeout: 5_000 });
  clients.push(c);
  return c;
}

function nextMessage(c: MqttClient, topic: string, ms = 5_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no message on ${topic} within ${ms} ms`)), ms);
    c.on('message', (t, payload) => {
      if (t !== topic) return;
      clearTimeout(timer);
      resolve(JSON.parse(payload.toString()));
    });
  });
}

async function queueNotice(t: TestControlPlane, tenantId: string, jobRef: string): Promise<void> {
  await enqueueOutbox(t.cp.store.db, {
    topic: WORK_NOTICE_TOPIC,
    tenantId,
    payload: { tenantId, jobRef, queuedAt: new Date().toISOString() },
  });
  t.cp.dispatcher.wake();
}

describe('embedded MQTT broker', () => {
  let t: TestControlPlane;
  let one: EnrolledTestDevice;
  let two: EnrolledTestDevice;
  let other: EnrolledTestDevice;
  beforeAll(async () => {
    t = await startTestControlPlane({ mqtt: true });
    one = await enrollTestDevice(t, t.tenants.a.admin, { name: 'one' });
    two = await enrollTestDevice(t, t.tenants.a.admin, { name: 'two' });
    other = await enrollTestDevice(t, t.tenants.b.admin, { name: 'other-tenant' });
  });
  afterAll(() => t.close());

  it('gives enrolled devices the broker URL', () => {
    expect(one.mqttUrl).toMatch(/^mqtt:\/\/localhost:\d+$/); // host of PUBLIC_BASE_URL
  });

  it('refuses a connection without a valid device token, or with another device id', async () => {
    await expect(connect(one.mqttUrl!, one.id, 'not-a-token')).rejects.toThrow();
    await expect(connect(one.mqttUrl!, two.id, await one.accessToken())).rejects.toThrow();
    await expect(connect(one.mqttUrl!, 'admin', t.tenants.a.admin)).rejects.toThrow();
  });

  it("tells every device of the tenant when work is queued, and no other tenant's device", async () => {
    const c1 = await connect(one.mqttUrl!, one.id, await one.accessToken());
    const c2 = await connect(two.mqttUrl!, two.id, await two.accessToken());
    const cx = await connect(other.mqttUrl!, other.id, await other.accessToken());
    await c1.subscribeAsync(deviceTopics(one.tenantId, one.id).workNotice, { qos: 1 });
    await c2.subscribeAsync(deviceTopics(two.tenantId, two.id).workNotice, { qos: 1 });
    await cx.subscribeAsync(deviceTopics(other.tenantId, other.id).workNotice, { qos: 1 });
    let otherGot = false;
    cx.on('message', () => (otherGot = true));
    const m1 = nextMessage(c1, deviceTopics(one.tenantId, one.id).workNotice);
    const m2 = nextMessage(c2, deviceTopics(two.tenantId, two.id).workNotice);
    await queueNotice(t, t.tenants.a.id, 'job-1');
    const notice = WorkNoticeSchema.parse(await m1);
    expect(notice).toMatchObject({ type: 'work_available', tenantId: t.tenants.a.id, jobRef: 'job-1' });
    expect(await m2).toMatchObject({ jobRef: 'job-1' });
    await new Promise((r) => setTimeout(r, 200));
    expect(otherGot).toBe(false);
  });

  it("refuses a subscription to another device's topics (ACL)", async () => {
    const c1 = await connect(one.mqttUrl!, one.id, await one.accessToken());
    const [mine] = await c1.subscribeAsync(deviceTopics(one.tenantId, one.id).all);
    expect(mine!.qos).not.toBe(128);
    // mqtt.js rejects a SUBACK with return code 0x80 (MQTT 3.1.1 §3.9.3); the session stays up.
    await expect(c1.subscribeAsync(deviceTopics(two.tenantId, two.id).workNotice)).rejects.toThrow(
      /Subscribe error/,
    );
    await expect(c1.subscribeAsync(`dpp/${one.tenantId}/#`)).rejects.toThrow(/Subscribe error/);
    await expect(c1.subscribeAsync('dpp/+/devices/#')).rejects.toThrow(/Subscribe error/);
    expect(c1.connected).toBe(true);
  });

  it("does not deliver a publish to another device's topic, and lets a device publish its own status", async () => {
    const watcher = await connect(two.mqttUrl!, two.id, await two.accessToken());
    await watcher.subscribeAsync(deviceTopics(two.tenantId, two.id).all, { qos: 1 });
    let leaked = false;
    watcher.on('message', () => (leaked = true));
    const attacker = await connect(one.mqttUrl!, one.id, await one.accessToken());
    attacker.on('error', () => undefined);
    attacker.publish(
      deviceTopics(two.tenantId, two.id).presence,
      JSON.stringify({ status: 'offline', at: new Date().toISOString() }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(leaked).toBe(false);

    const own = await connect(one.mqttUrl!, one.id, await one.accessToken());
    await own.subscribeAsync(deviceTopics(one.tenantId, one.id).printerStatus('zebra-1'));
    const status = nextMessage(own, deviceTopics(one.tenantId, one.id).printerStatus('zebra-1'));
    await own.publishAsync(
      deviceTopics(one.tenantId, one.id).printerStatus('zebra-1'),
      JSON.stringify({ printer: 'zebra-1', state: 'paper_out', at: new Date().toISOString() }),
      { qos: 1, retain: true },
    );
    expect(await status).toMatchObject({ state: 'paper_out' });
  });

  it("closes a revoked device's MQTT session at once", async () => {
    const device = await enrollTestDevice(t, t.tenants.a.admin, { name: 'to-revoke' });
    const c = await connect(device.mqttUrl!, device.id, await device.accessToken());
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    const r = await t.call('POST', `/api/v2/devices/${device.id}/revoke`, { key: t.tenants.a.admin });
    expect(r.status).toBe(200);
    await closed;
    expect(c.connected).toBe(false);
  });
});

const externalUrl = process.env.TEST_MQTT_URL;
describe.skipIf(!externalUrl)('external MQTT broker (MQTT_URL, e.g. Mosquitto)', () => {
  it('publishes work notices through the external broker', async () => {
    const t = await startTestControlPlane({ env: { MQTT_URL: externalUrl! } });
    try {
      const device = await enrollTestDevice(t, t.tenants.a.admin);
      expect(device.mqttUrl).toBe(externalUrl!.replace(/\/$/, ''));
      const sub = await mqtt.connectAsync(externalUrl!, { reconnectPeriod: 0 });
      clients.push(sub);
      const topic = deviceTopics(device.tenantId, device.id).workNotice;
      await sub.subscribeAsync(topic, { qos: 1 });
      const got = nextMessage(sub, topic);
      await queueNotice(t, device.tenantId, 'job-ext');
      expect(await got).toMatchObject({ type: 'work_available', jobRef: 'job-ext' });
    } finally {
      await t.close();
    }
  });
});
