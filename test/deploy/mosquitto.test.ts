/**
 * The Mosquitto configuration the repository ships (deploy/mosquitto/), started by the test on a free port
 * with the machine's Mosquitto: dynamic security is initialised on the first start, the control plane's own
 * client is created through it, the control plane starts with that login, and nobody gets in without one.
 * (Never the broker already on 1883.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestControlPlane } from '@dpp/testkit';
import { type ShippedBroker, startShippedBroker } from './support/shipped-broker.js';

async function refused(url: string, opts: mqtt.IClientOptions): Promise<boolean> {
  try {
    const c = await mqtt.connectAsync(url, { ...opts, reconnectPeriod: 0, connectTimeout: 3_000 });
    await c.endAsync(true);
    return false;
  } catch {
    return true;
  }
}

describe('Mosquitto as the repository ships it (dynamic security)', () => {
  let b: ShippedBroker;
  beforeAll(async () => {
    b = await startShippedBroker();
  });
  afterAll(() => b?.close());

  it('initialises dynamic security once, with the admin from the environment', () => {
    expect(b.log()).toContain('dynamic security initialised');
    const dynsec = JSON.parse(readFileSync(path.join(b.dir, 'dynamic-security.json'), 'utf8')) as {
      clients: { username: string }[];
    };
    expect(dynsec.clients.map((c) => c.username).sort()).toEqual(['admin', 'control-plane']);
  });

  it('lets the control plane start with its own login and publish under dpp/; nobody gets in without one', async () => {
    const url = b.url;
    const t = await startTestControlPlane({ env: { MQTT_URL: b.controlPlaneUrl } });
    try {
      expect((await t.call('GET', '/readyz')).status).toBe(200);
    } finally {
      await t.close();
    }
    const cp = await mqtt.connectAsync(url, {
      username: 'control-plane',
      password: b.secrets.MQTT_CONTROL_PLANE_PASSWORD,
      reconnectPeriod: 0,
    });
    try {
      await cp.subscribeAsync('dpp/t-1/#', { qos: 1 });
      const got = new Promise<string>((r) => cp.once('message', (_t, p) => r(p.toString())));
      await cp.publishAsync('dpp/t-1/devices/d-1/work', 'hello', { qos: 1 });
      expect(await got).toBe('hello');
    } finally {
      await cp.endAsync(true);
    }
    expect(await refused(url, {})).toBe(true);
    expect(await refused(url, { username: 'control-plane', password: 'wrong' })).toBe(true);
  });

  it('rotates the control plane password when the bootstrap runs again; the old one stops working', async () => {
    expect(await b.bootstrap({ MQTT_CONTROL_PLANE_PASSWORD: 'cp-pw-rotated' })).toContain('ready');
    const url = b.url;
    expect(
      await refused(url, { username: 'control-plane', password: b.secrets.MQTT_CONTROL_PLANE_PASSWORD }),
    ).toBe(true);
    expect(await refused(url, { username: 'control-plane', password: 'cp-pw-rotated' })).toBe(false);
  });
});
