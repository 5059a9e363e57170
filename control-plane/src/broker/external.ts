import { randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import type { Logger } from '../logging/logger.js';
import { type Broker, type DeviceBrokerAuth, type DeviceBrokerLogin, accessTokenLogin } from './broker.js';
import { DynamicSecurity, deviceBrokerPassword } from './dynamic-security.js';

export interface ExternalBrokerOptions {
  /**
   * MQTT_DEVICE_AUTH: `dynamic-security` makes the control plane administer a login per device on the broker
   * (Mosquitto 2 with its dynamic-security plugin); `access-token` leaves device logins to the broker, which
   * checks access tokens (EMQX's JWT authenticator).
   */
  deviceAuth: 'dynamic-security' | 'access-token';
  /** MQTT_DEVICE_SECRET: what device passwords are derived from (dynamic-security only). */
  deviceSecret?: string | undefined;
}

/**
 * An external broker (MQTT_URL), e.g. Mosquitto or an EMQX cluster. The control plane connects as a client
 * with the credentials in the URL and publishes notices; with dynamic security it also administers each
 * device's login and ACL there (device protocol page: "External broker").
 */
export class ExternalBroker implements Broker {
  readonly deviceAuth: DeviceBrokerAuth;

  private constructor(
    private readonly client: MqttClient,
    readonly deviceUrl: string,
    private readonly dynsec: { admin: DynamicSecurity; secret: string } | null,
  ) {
    this.deviceAuth = dynsec ? 'password' : 'access_token';
  }

  static async connect(
    url: string,
    log: Logger,
    opts: ExternalBrokerOptions = { deviceAuth: 'access-token' },
  ): Promise<ExternalBroker> {
    const client = mqtt.connect(url, {
      clientId: `dpp-control-plane-${randomUUID()}`,
      reconnectPeriod: 2_000,
      connectTimeout: 10_000,
      // A new session after a reconnect: the answers' subscription is made again below.
      clean: true,
    });
    await new Promise<void>((resolve, reject) => {
      client.once('connect', () => resolve());
      client.once('error', reject);
    });
    client.on('error', (err) => log.warn({ err }, 'external MQTT broker error'));
    const safe = new URL(url);
    safe.username = '';
    safe.password = '';
    let dynsec: ExternalBroker['dynsec'] = null;
    if (opts.deviceAuth === 'dynamic-security') {
      if (!opts.deviceSecret) throw new Error('MQTT_DEVICE_SECRET is needed with dynamic security');
      const admin = new DynamicSecurity(client);
      try {
        await admin.open();
      } catch (err) {
        await client.endAsync(true);
        throw new Error(
          `MQTT_DEVICE_AUTH=dynamic-security, but ${safe.host} does not answer its commands for this login ` +
            `(is the dynamic-security plugin loaded, and may this login use $CONTROL/dynamic-security/#?): ` +
            (err as Error).message,
          { cause: err },
        );
      }
      client.on('connect', () => {
        admin
          .open()
          .catch((err: unknown) => log.warn({ err }, 'dynamic security unreachable after a reconnect'));
      });
      dynsec = { admin, secret: opts.deviceSecret };
    }
    log.info({ url: safe.toString(), deviceAuth: opts.deviceAuth }, 'connected to external MQTT broker');
    return new ExternalBroker(client, safe.toString().replace(/\/$/, ''), dynsec);
  }

  async publish(topic: string, payload: unknown, opts: { qos: 0 | 1; retain?: boolean }): Promise<void> {
    await this.client.publishAsync(topic, JSON.stringify(payload), {
      qos: opts.qos,
      retain: opts.retain ?? false,
    });
  }

  async admitDevice(d: {
    tenantId: string;
    deviceId: string;
    keyThumbprint: string;
  }): Promise<DeviceBrokerLogin> {
    if (!this.dynsec) return accessTokenLogin(d.deviceId);
    const password = deviceBrokerPassword(this.dynsec.secret, d.deviceId, d.keyThumbprint);
    await this.dynsec.admin.admitDevice({ tenantId: d.tenantId, deviceId: d.deviceId, password });
    return { username: d.deviceId, password };
  }

  /**
   * With dynamic security: deletes the device's login, which ends its sessions at once. Otherwise the broker
   * owns device sessions, and a revoked device's next connect is refused by its token check.
   */
  async revokeDevice(deviceId: string): Promise<void> {
    await this.dynsec?.admin.removeDevice(deviceId);
  }

  /** Lists the device roles on the broker and removes the logins of devices that are not active. */
  async sweepDevices(active: (ids: string[]) => Promise<Set<string>>): Promise<number> {
    if (!this.dynsec) return 0;
    const onBroker = await this.dynsec.admin.deviceClients();
    if (onBroker.length === 0) return 0;
    const keep = await active(onBroker);
    const gone = onBroker.filter((id) => !keep.has(id));
    for (const id of gone) await this.dynsec.admin.removeDevice(id);
    return gone.length;
  }

  async close(): Promise<void> {
    await this.client.endAsync();
  }
}
