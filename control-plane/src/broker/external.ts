import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../logging/logger.js';
import type { Broker } from './broker.js';

/**
 * An external broker (MQTT_URL), e.g. Mosquitto or an EMQX cluster. The control plane connects as a
 * client with the credentials in the URL and publishes notices; device authentication and topic ACLs are
 * that broker's job (README: configuring an external broker).
 */
export class ExternalBroker implements Broker {
  private constructor(
    private readonly client: MqttClient,
    readonly deviceUrl: string,
  ) {}

  static async connect(url: string, log: Logger): Promise<ExternalBroker> {
    const client = mqtt.connect(url, {
      clientId: `dpp-control-plane-${randomUUID()}`,
      reconnectPeriod: 2_000,
      connectTimeout: 10_000,
    });
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    client.on('error', (err) => log.warn({ err }, 'external MQTT broker error'));
    const safe = new URL(url);
    safe.username = '';
    safe.password = '';
    log.info({ url: safe.toString() }, 'connected to external MQTT broker');
    return new ExternalBroker(client, safe.toString().replace(/\/$/, ''));
  }

  async publish(topic: string, payload: unknown, opts: { qos: 0 | 1; retain?: boolean }): Promise<void> {
    await this.client.publishAsync(topic, JSON.stringify(payload), {
      qos: opts.qos,
      retain: opts.retain ?? false,
    });
  }

  disconnectDevice(): void {
    // The external broker owns device sessions; its auth hook refuses a revoked device's next connect.
  }

  async close(): Promise<void> {
    await this.client.endAsync();
  }
}
