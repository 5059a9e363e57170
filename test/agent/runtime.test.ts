/**
 * The agent as a whole, idle: it starts from its configuration and enrollment, watches its printers,
 * publishes their status over MQTT and the console, answers `dpp-agent status`, and stops cleanly.
 */
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceTopics } from '@dpp/shared';
import { freePort, startTestControlPlane, type TestControlPlane } from '@dpp/testkit';
import { runCli, type CliOutput, type PrinterView } from '@dpp/agent';
import { startFloor, type Floor } from './support/floor.js';

describe('the agent at rest', () => {
  let t: TestControlPlane;
  let floor: Floor;
  let consolePort: number;

  beforeAll(async () => {
    t = await startTestControlPlane({ mqtt: true });
    consolePort = await freePort();
    floor = await startFloor(t, t.tenants.a.admin, {
      printers: [
        { name: 'zebra-1', rfid: true },
        { name: 'zebra-2', rfid: false, scanner: false, transport: 'tcp' },
      ],
      agent: { console: { host: '127.0.0.1', port: consolePort, enabled: true } },
    });
  });
  afterAll(async () => {
    await floor?.close();
    await t?.close();
  });

  async function retained(topic: string): Promise<Record<string, unknown>> {
    const client = await mqtt.connectAsync(floor.identity.mqtt.url!, {
      username: floor.identity.deviceId,
      password: await fetchToken(),
      reconnectPeriod: 0,
    });
    try {
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`nothing retained on ${topic}`)), 3000);
        client.on('message', (tp, payload) => {
          if (tp !== topic) return;
          clearTimeout(timer);
          resolve(JSON.parse(payload.toString()) as Record<string, unknown>);
        });
        void client.subscribeAsync(topic, { qos: 1 });
      });
    } finally {
      await client.endAsync();
    }
  }

  /** Another token of the same device, through the agent's own token client. */
  async function fetchToken(): Promise<string> {
    const { TokenClient, loadKeyFile, keyFilePath, silentLogger } = await import('@dpp/agent');
    const key = await loadKeyFile(keyFilePath(floor.dataDir));
    return new TokenClient({
      identity: floor.identity,
      key,
      baseUrl: t.url,
      timeoutMs: 5000,
      log: silentLogger,
    }).token();
  }

  it('shows its device, connections and ready printers on the console', async () => {
    const status = async () =>
      (await fetch(`${floor.agent!.consoleUrl}/api/status`).then((r) => r.json())).data;
    await expect
      .poll(async () => (await status()).printers.map((p: PrinterView) => p.state))
      .toEqual(['ready', 'ready']);
    await expect.poll(async () => (await status()).connections.mqtt.state).toBe('connected');
    const s = await status();
    expect(s.device).toMatchObject({ id: floor.identity.deviceId, tenantId: t.tenants.a.id });
    expect(s.printers[0]).toMatchObject({
      name: 'zebra-1',
      language: 'zpl',
      transport: 'serial',
      rfid: true,
      currentJob: null,
    });
    expect(s.printers[1]).toMatchObject({ name: 'zebra-2', transport: 'tcp', scanner: null });
    expect(s.outbox).toMatchObject({ pending: 0 });
  });

  it('publishes printer status and presence over MQTT, and follows a printer running out of paper', async () => {
    const topics = deviceTopics(floor.identity.tenantId, floor.identity.deviceId);
    expect(await retained(topics.presence)).toMatchObject({
      status: 'online',
      printers: ['zebra-1', 'zebra-2'],
    });
    // With the printer's waits, for a dashboard of the whole floor on the broker (none yet: nothing printed).
    await expect
      .poll(() => retained(topics.printerStatus('zebra-1')))
      .toMatchObject({
        state: 'ready',
        waits: { agent: { labels: 0, ms: 0 }, scan: { labels: 0, ms: 0 } },
      });

    const events: string[] = [];
    const ac = new AbortController();
    const sse = fetch(`${floor.agent!.consoleUrl}/api/events`, { signal: ac.signal }).then(async (res) => {
      const reader = res.body!.getReader();
      for (;;) events.push(new TextDecoder().decode((await reader.read()).value));
    });
    floor.printers['zebra-1']!.faults.set('paperOut', true);
    await expect
      .poll(() => retained(topics.printerStatus('zebra-1')), { timeout: 10_000 })
      .toMatchObject({
        state: 'paper_out',
        detail: 'paperOut',
      });
    await expect
      .poll(() => events.join(''))
      .toMatch(/event: printer\ndata: \{"name":"zebra-1".*"state":"paper_out"/);
    floor.printers['zebra-1']!.faults.set('paperOut', false);
    await expect
      .poll(() => retained(topics.printerStatus('zebra-1')), { timeout: 10_000 })
      .toMatchObject({ state: 'ready' });
    ac.abort();
    await sse.catch(() => undefined);
  });

  it('answers dpp-agent status and printers from the running agent', async () => {
    const out: string[] = [];
    const o: CliOutput = { line: (l = '') => out.push(l), error: (l) => out.push(l) };
    expect(await runCli(['status', '--config', floor.configFile], o)).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(new RegExp(`^device +floor-1 \\(${floor.identity.deviceId}\\)`, 'm'));
    expect(text).toMatch(/^mqtt +connected$/m);
    expect(text).toMatch(/^zebra-1 +ready /m);
    out.length = 0;
    expect(await runCli(['printers', '--config', floor.configFile], o)).toBe(0);
    expect(out.join('\n')).toMatch(/zebra-2 +zpl +tcp .* ready +\(from the running agent\)/);
  });

  it('stops cleanly and says offline', async () => {
    await floor.agent!.stop();
    const topics = deviceTopics(floor.identity.tenantId, floor.identity.deviceId);
    expect(await retained(topics.presence)).toMatchObject({ status: 'offline' });
    floor.agent = null;
  });
});
