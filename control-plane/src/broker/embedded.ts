import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import { isWithinDeviceSubtree, parseDeviceTopic } from '@dpp/shared';
import type { Logger } from '../logging/logger.js';
import type { Principal } from '../http/index.js';
import { type Broker, type DeviceBrokerLogin, accessTokenLogin } from './broker.js';

export interface EmbeddedBrokerOptions {
  port: number;
  host: string;
  /** Host devices should use to reach the broker (from PUBLIC_BASE_URL). */
  publicHost: string;
  /** Resolves an access token to a principal; only devices may connect. */
  authenticate: (token: string) => Promise<Principal | null>;
  log: Logger;
}

interface Session {
  tenantId: string;
  deviceId: string;
}

/** What a device may publish under its own prefix (MQTT_CONTRACT in @dpp/shared). */
const DEVICE_PUBLISHES = [/^presence$/, /^printers\/[^/+#]+\/status$/];

/**
 * The embedded aedes broker. A device connects with username = its device id and password = an access
 * token from /api/v2/oauth/token; it may subscribe only inside `dpp/{tenant}/devices/{device}/` and publish
 * only its presence and printer status there. The control plane publishes as the server (no client).
 */
export class EmbeddedBroker implements Broker {
  readonly deviceAuth = 'access_token' as const;
  private readonly sessions = new WeakMap<Client, Session>();
  private readonly byDevice = new Map<string, Set<Client>>();

  private constructor(
    private readonly aedes: Aedes,
    private readonly server: net.Server,
    readonly deviceUrl: string,
    readonly port: number,
  ) {}

  static async start(opts: EmbeddedBrokerOptions): Promise<EmbeddedBroker> {
    const aedes = await Aedes.createBroker({ id: 'dpp-control-plane' });
    const server = net.createServer(aedes.handle);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, opts.host, () => resolve());
      });
    } catch (err) {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      throw err;
    }
    const port = (server.address() as AddressInfo).port;
    const broker = new EmbeddedBroker(aedes, server, `mqtt://${opts.publicHost}:${port}`, port);
    broker.wire(opts);
    opts.log.info({ port }, 'embedded MQTT broker listening');
    return broker;
  }

  private wire(opts: EmbeddedBrokerOptions): void {
    const refuse = (code: 4 | 5, message: string): AuthenticateError =>
      Object.assign(new Error(message), { returnCode: code }) as AuthenticateError;

    this.aedes.authenticate = (client, username, password, done) => {
      const token = password?.toString('utf8') ?? '';
      opts
        .authenticate(token)
        .then((principal) => {
          if (!principal || principal.type !== 'device' || principal.id !== username) {
            return done(refuse(4, 'bad username or password'), false);
          }
          this.sessions.set(client, { tenantId: principal.tenant.id, deviceId: principal.id });
          const set = this.byDevice.get(principal.id) ?? new Set();
          set.add(client);
          this.byDevice.set(principal.id, set);
          done(null, true);
        })
        .catch((err: unknown) => {
          opts.log.warn({ err }, 'MQTT authentication failed');
          done(refuse(5, 'not authorized'), false);
        });
    };

    this.aedes.authorizeSubscribe = (client, sub, done) => {
      const s = this.sessions.get(client);
      if (!s || !isWithinDeviceSubtree(sub.topic, s.tenantId, s.deviceId)) {
        opts.log.warn({ deviceId: s?.deviceId, topic: sub.topic }, 'MQTT subscribe refused');
        // A negated subscription: SUBACK return code 0x80 (MQTT 3.1.1 §3.9.3); the session stays up.
        return done(null, null);
      }
      done(null, sub);
    };

    this.aedes.authorizePublish = (client, packet, done) => {
      if (!client) return done(null); // the control plane itself
      const s = this.sessions.get(client);
      const parsed = parseDeviceTopic(packet.topic);
      const own = s && parsed && parsed.tenantId === s.tenantId && parsed.deviceId === s.deviceId;
      if (!own || !DEVICE_PUBLISHES.some((re) => re.test(parsed.rest))) {
        opts.log.warn({ deviceId: s?.deviceId, topic: packet.topic }, 'MQTT publish refused');
        return done(new Error('publish outside the device topic subtree'));
      }
      done(null);
    };

    this.aedes.on('clientDisconnect', (client) => this.forget(client));
  }

  private forget(client: Client): void {
    const s = this.sessions.get(client);
    if (!s) return;
    const set = this.byDevice.get(s.deviceId);
    set?.delete(client);
    if (set && set.size === 0) this.byDevice.delete(s.deviceId);
  }

  publish(topic: string, payload: unknown, opts: { qos: 0 | 1; retain?: boolean }): Promise<void> {
    return new Promise((resolve, reject) => {
      this.aedes.publish(
        {
          cmd: 'publish',
          topic,
          payload: Buffer.from(JSON.stringify(payload)),
          qos: opts.qos,
          retain: opts.retain ?? false,
          dup: false,
        },
        (err) => (err ? reject(err) : resolve()),
      );
    });
  }

  admitDevice(d: { deviceId: string }): Promise<DeviceBrokerLogin> {
    return Promise.resolve(accessTokenLogin(d.deviceId));
  }

  revokeDevice(deviceId: string): Promise<void> {
    for (const client of this.byDevice.get(deviceId) ?? []) client.close();
    this.byDevice.delete(deviceId);
    return Promise.resolve();
  }

  /** Sessions are checked against the store at connect; there are no logins to sweep. */
  sweepDevices(): Promise<number> {
    return Promise.resolve(0);
  }

  /** Connected device sessions (for metrics and tests). */
  connectedDevices(): number {
    return this.byDevice.size;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
