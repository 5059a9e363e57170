/**
 * Devices on the Mosquitto the repository ships, with logins the control plane administers through dynamic
 * security (MQTT_DEVICE_AUTH=dynamic-security): a device asks for its login, connects with the agent's own
 * MQTT link, hears a work notice for a real job, is refused another device's topics and the broker's admin
 * topics, loses its session within a second of a revocation, and gets a new password with a new key. The
 * control plane's own login is of no use to a device. (Started on a free port, never the broker on 1883.)
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BrokerLogin, ControlPlaneClient, MqttLink, silentLogger, type MqttState } from '@dpp/agent';
import { JWT_BEARER_ASSERTION, type MqttCredentials, deviceTopics } from '@dpp/shared';
import {
  clientAssertion,
  enrollTestDevice,
  keyRotationProof,
  newDeviceKey,
  startTestControlPlane,
  type EnrolledTestDevice,
  type TestControlPlane,
} from '@dpp/testkit';
import { printableProduct, queueJobs } from '../agent/support/journey.js';
import { type ShippedBroker, startShippedBroker } from './support/shipped-broker.js';

const clients: MqttClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
});

async function connect(url: string, username: string, password: string): Promise<MqttClient> {
  const c = await mqtt.connectAsync(url, { username, password, reconnectPeriod: 0, connectTimeout: 5_000 });
  clients.push(c);
  return c;
}

async function refused(url: string, username: string, password: string): Promise<boolean> {
  try {
    await connect(url, username, password);
    return false;
  } catch {
    return true;
  }
}

/** What a subscription was granted: its QoS, or 128 when the broker refused it. */
async function granted(c: MqttClient, filter: string): Promise<number> {
  try {
    const [g] = await c.subscribeAsync(filter, { qos: 1 });
    return g!.qos;
  } catch (err) {
    // mqtt.js rejects a SUBACK that refuses (0x80).
    if (/Subscribe error/.test(String(err))) return 128;
    throw err;
  }
}

/** Whether a message on `topic` reaches `watcher` within `ms` after `send`. */
async function arrives(watcher: MqttClient, topic: string, send: () => Promise<unknown>, ms = 1_000) {
  let got = false;
  const seen = (t: string) => {
    if (t === topic) got = true;
  };
  watcher.on('message', seen);
  await send().catch(() => undefined);
  await new Promise((r) => setTimeout(r, ms));
  watcher.off('message', seen);
  return got;
}

describe('device logins administered on the shipped Mosquitto', () => {
  let b: ShippedBroker;
  let t: TestControlPlane;
  let one: EnrolledTestDevice;
  let two: EnrolledTestDevice;
  let other: EnrolledTestDevice;

  const credentials = async (d: EnrolledTestDevice, token?: string) => {
    const r = await t.call('POST', `/api/v2/devices/${d.id}/mqtt-credentials`, {
      key: token ?? (await d.accessToken()),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    return r.body.data as MqttCredentials;
  };

  beforeAll(async () => {
    b = await startShippedBroker();
    t = await startTestControlPlane({
      env: {
        MQTT_URL: b.controlPlaneUrl,
        MQTT_DEVICE_AUTH: 'dynamic-security',
        MQTT_DEVICE_SECRET: 'device-logins-test-secret-0123456789abcdef',
      },
    });
    one = await enrollTestDevice(t, t.tenants.a.admin, { name: 'one' });
    two = await enrollTestDevice(t, t.tenants.a.admin, { name: 'two' });
    other = await enrollTestDevice(t, t.tenants.b.admin, { name: 'other-tenant' });
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await b?.close();
  });

  it('hands a device its own login, and the agent connects with it and hears a work notice', async () => {
    const c = await credentials(one);
    expect(c).toMatchObject({ auth: 'password', username: one.id, url: b.url });
    expect(c.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(c.topicPrefix).toBe(`dpp/${one.tenantId}/devices/${one.id}/`);
    expect(one.mqttUrl).toBe(b.url); // enrollment names the broker, without the control plane's login

    const tokens = { token: () => one.accessToken(), invalidate: () => undefined };
    const api = new ControlPlaneClient({ baseUrl: t.url, tokens, timeoutMs: 5_000 });
    const link = new MqttLink({
      url: c.url!,
      deviceId: one.id,
      tenantId: one.tenantId,
      login: new BrokerLogin({ deviceId: one.id, tokens, fetchCredentials: (id) => api.mqttCredentials(id) }),
      printers: ['zebra-1'],
      agentVersion: 'test',
      log: silentLogger,
    });
    const states: MqttState[] = [];
    link.events.on('state', (s) => states.push(s));
    const notice = new Promise((resolve) => link.events.on('work', resolve));
    link.start();
    try {
      await expect.poll(() => link.state, { timeout: 10_000 }).toBe('connected');
      const product = await printableProduct(t, t.tenants.a.admin, 1);
      const [jobRef] = await queueJobs(t, t.tenants.a.admin, product, { labelTemplate: { rfid: false } });
      await expect(notice).resolves.toMatchObject({ type: 'work_available', tenantId: one.tenantId, jobRef });
      expect(states).toEqual(['connecting', 'connected']); // the first login worked
    } finally {
      await link.stop();
    }
  });

  it("refuses a device another device's topics and the broker's admin topics", async () => {
    const mine = deviceTopics(one.tenantId, one.id);
    const peer = deviceTopics(two.tenantId, two.id);
    const far = deviceTopics(other.tenantId, other.id);
    const c1 = await connect(b.url, one.id, (await credentials(one)).password!);
    const c2 = await connect(b.url, two.id, (await credentials(two)).password!);
    const cp = await connect(b.url, 'control-plane', b.secrets.MQTT_CONTROL_PLANE_PASSWORD);

    expect(await granted(c1, mine.all)).toBe(1);
    for (const filter of [peer.all, peer.workNotice, far.all, 'dpp/#', `dpp/${one.tenantId}/#`, '#'])
      expect(await granted(c1, filter), filter).toBe(128);
    expect(await granted(c1, '$CONTROL/dynamic-security/v1/response')).toBe(128);

    // Publishing: only its own presence and printer status reach anyone.
    await cp.subscribeAsync('dpp/#', { qos: 1 });
    expect(
      await arrives(cp, mine.printerStatus('zebra-1'), () =>
        c1.publishAsync(mine.printerStatus('zebra-1'), '{}', { qos: 1 }),
      ),
    ).toBe(true);
    expect(
      await arrives(cp, peer.presence, () =>
        c1.publishAsync(peer.presence, '{"status":"offline"}', { qos: 1 }),
      ),
    ).toBe(false);
    expect(await arrives(c2, peer.workNotice, () => c1.publishAsync(peer.workNotice, '{}', { qos: 1 }))).toBe(
      false,
    );
    expect(await arrives(c1, mine.workNotice, () => c1.publishAsync(mine.workNotice, '{}', { qos: 1 }))).toBe(
      false,
    );

    // A device cannot make itself an admin: its command never reaches the plugin.
    await cp.subscribeAsync('$CONTROL/dynamic-security/v1/response', { qos: 1 });
    const grab = JSON.stringify({
      commands: [
        { command: 'addClientRole', username: one.id, rolename: 'control-plane', correlationData: 'x' },
      ],
    });
    expect(
      await arrives(cp, '$CONTROL/dynamic-security/v1/response', () =>
        c1.publishAsync('$CONTROL/dynamic-security/v1', grab, { qos: 1 }),
      ),
    ).toBe(false);
    expect(await granted(c1, peer.all)).toBe(128);
  });

  it("is of no use to a device to know the control plane's login name, or another device's", async () => {
    const own = (await credentials(one)).password!;
    expect(await refused(b.url, 'control-plane', own)).toBe(true);
    expect(await refused(b.url, 'admin', own)).toBe(true);
    expect(await refused(b.url, two.id, own)).toBe(true);
    // Asking for another device's login is a 404, like reading it.
    const r = await t.call('POST', `/api/v2/devices/${two.id}/mqtt-credentials`, {
      key: await one.accessToken(),
    });
    expect(r.status).toBe(404);
    // An API key is not a device.
    const k = await t.call('POST', `/api/v2/devices/${one.id}/mqtt-credentials`, { key: t.tenants.a.admin });
    expect(k.status).toBe(403);
  });

  it('gives a new password with a new key; the old one stops working', async () => {
    const before = (await credentials(two)).password!;
    const key = await newDeviceKey();
    const proof = await keyRotationProof(key, two.id);
    const rotated = await t.call('POST', `/api/v2/devices/${two.id}/rotate-key`, {
      key: await two.accessToken(),
      headers: { 'Idempotency-Key': randomUUID() },
      body: { publicKeyJwk: key.publicJwk, proof },
    });
    expect(rotated.status, rotated.text).toBe(200);
    expect(await refused(b.url, two.id, before)).toBe(true);
    const token = await t.call('POST', '/api/v2/oauth/token', {
      headers: { 'Idempotency-Key': randomUUID() },
      body: {
        grant_type: 'client_credentials',
        client_assertion_type: JWT_BEARER_ASSERTION,
        client_assertion: await clientAssertion(key, two.id, two.tokenEndpoint),
      },
    });
    expect(token.status).toBe(200);
    const after = (await credentials(two, token.body.access_token as string)).password!;
    expect(after).not.toBe(before);
    expect(await refused(b.url, two.id, after)).toBe(false);
  });

  it('ends a revoked device’s session within a second and never lets it back', async () => {
    const password = (await credentials(other)).password!;
    const c = await connect(b.url, other.id, password);
    const closed = new Promise<number>((resolve) => c.once('close', () => resolve(Date.now())));
    const started = Date.now();
    const r = await t.call('POST', `/api/v2/devices/${other.id}/revoke`, { key: t.tenants.b.admin });
    expect(r.status).toBe(200);
    const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 5_000))]);
    expect(at).toBeGreaterThan(0);
    expect(at - started).toBeLessThan(1_000);
    expect(await refused(b.url, other.id, password)).toBe(true);
    const dynsec = readFileSync(path.join(b.dir, 'dynamic-security.json'), 'utf8');
    expect(dynsec).not.toContain(other.id); // neither its client nor its role is left
  });

  it('sweeps away the login of a device revoked while the broker was not told', async () => {
    const password = (await credentials(one)).password!;
    // The revocation commits, but the broker call is lost (as if the broker were away at that moment).
    await t.cp.store.db
      .updateTable('devices')
      .set({ status: 'revoked', revoked_at: new Date().toISOString() })
      .where('id', '=', one.id)
      .execute();
    expect(await refused(b.url, one.id, password)).toBe(false);
    const removed = await t.cp.services.broker.sweepDevices((ids) => t.cp.services.devices.activeAmong(ids));
    expect(removed).toBe(1);
    expect(await refused(b.url, one.id, password)).toBe(true);
  });
});
