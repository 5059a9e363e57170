/**
 * The agent's MQTT session against the control plane's real embedded broker: token as password, presence
 * and printer status retained in the device's subtree, work notices, and what happens when the broker goes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopics, type WorkNotice } from '@dpp/shared';
import { startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import {
  BrokerLogin,
  ControlPlaneClient,
  MqttLink,
  TokenClient,
  enroll,
  keyFilePath,
  loadKeyFile,
  silentLogger,
  type Identity,
  type MqttState,
} from '@dpp/agent';

describe('MqttLink on the embedded broker', () => {
  let t: TestControlPlane;
  let dir: string;

  beforeAll(async () => {
    t = await startTestControlPlane({ mqtt: true });
    dir = await mkdtemp(path.join(os.tmpdir(), 'dpp-agent-mqtt-'));
  });
  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function device(name: string): Promise<{ identity: Identity; tokens: TokenClient }> {
    const created = await t.call('POST', '/api/v2/devices/enrollment-tokens', {
      key: t.tenants.a.admin,
      body: {},
    });
    const dataDir = path.join(dir, name);
    const identity = await enroll({ url: t.url, token: created.body.data.token, dataDir });
    const key = await loadKeyFile(keyFilePath(dataDir));
    return {
      identity,
      tokens: new TokenClient({ identity, key, baseUrl: t.url, timeoutMs: 5000, log: silentLogger }),
    };
  }

  function linkOf(d: { identity: Identity; tokens: TokenClient }): MqttLink {
    return new MqttLink({
      url: d.identity.mqtt.url!,
      deviceId: d.identity.deviceId,
      tenantId: d.identity.tenantId,
      login: new BrokerLogin({
        deviceId: d.identity.deviceId,
        tokens: d.tokens,
        fetchCredentials: (id) =>
          new ControlPlaneClient({ baseUrl: t.url, tokens: d.tokens, timeoutMs: 5000 }).mqttCredentials(id),
      }),
      printers: ['zebra-1'],
      agentVersion: 'test',
      log: silentLogger,
      minReconnectMs: 50,
      maxReconnectMs: 200,
    });
  }

  /** A second session of the same device, to see what the broker retained. */
  async function retained(d: { identity: Identity; tokens: TokenClient }, topic: string): Promise<unknown> {
    const client = await mqtt.connectAsync(d.identity.mqtt.url!, {
      username: d.identity.deviceId,
      password: await d.tokens.token(),
      reconnectPeriod: 0,
    });
    try {
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`nothing retained on ${topic}`)), 3000);
        client.on('message', (tp, payload) => {
          if (tp !== topic) return;
          clearTimeout(timer);
          resolve(JSON.parse(payload.toString()));
        });
        void client.subscribeAsync(topic, { qos: 1 });
      });
    } finally {
      await client.endAsync();
    }
  }

  it('connects with a token, says online, publishes printer status and hears work notices', async () => {
    const d = await device('a');
    const link = linkOf(d);
    const states: MqttState[] = [];
    link.events.on('state', (s) => states.push(s));
    const notices: WorkNotice[] = [];
    link.events.on('work', (n) => notices.push(n));
    link.start();
    await expect.poll(() => link.state).toBe('connected');
    const topics = deviceTopics(d.identity.tenantId, d.identity.deviceId);
    expect(d.identity.mqtt.topicPrefix).toBe(topics.presence.replace(/presence$/, ''));
    expect(await retained(d, topics.presence)).toMatchObject({ status: 'online', printers: ['zebra-1'] });

    link.publishPrinterStatus({ printer: 'zebra-1', state: 'paper_out', at: new Date().toISOString() });
    await expect
      .poll(() => retained(d, topics.printerStatus('zebra-1')))
      .toMatchObject({ state: 'paper_out' });

    const notice = {
      type: 'work_available',
      tenantId: d.identity.tenantId,
      queuedAt: new Date().toISOString(),
    };
    await t.cp.services.broker.publish(topics.workNotice, notice, { qos: 1 });
    await t.cp.services.broker.publish(topics.workNotice, { junk: true }, { qos: 1 });
    await expect.poll(() => notices).toEqual([notice]);

    await link.stop();
    expect(await retained(d, topics.presence)).toMatchObject({ status: 'offline' });
    expect(states).toEqual(['connecting', 'connected', 'disconnected']);
  });

  it('keeps trying while refused, and stays disconnected once the device is revoked', async () => {
    const d = await device('b');
    const link = linkOf(d);
    link.start();
    await expect.poll(() => link.state).toBe('connected');
    const r = await t.call('POST', `/api/v2/devices/${d.identity.deviceId}/revoke`, {
      key: t.tenants.a.admin,
    });
    expect(r.status).toBe(200);
    await expect.poll(() => link.state).toBe('disconnected');
    await new Promise((res) => setTimeout(res, 500));
    expect(link.state).not.toBe('connected');
    await link.stop();
  });
});
