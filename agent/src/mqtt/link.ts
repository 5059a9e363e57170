/**
 * The agent's MQTT session (mqtt.js): username = device id, password = what `login` says (a fresh access
 * token on every connect on the embedded broker, the device's own broker password on an administered
 * Mosquitto), a retained `presence` with a retained `offline` last will, the work-notice subscription, and
 * retained printer statuses (re-sent after a reconnect). Reconnection is ours rather than mqtt.js's, so that
 * each try can fetch its login first; backoff from 1 s to 30 s. The broker only says "there is work": a notice that is missed loses nothing, because the
 * workers also poll.
 */
import mqtt, { type MqttClient } from 'mqtt';
import {
  WorkNoticeSchema,
  deviceTopics,
  type DeviceTopics,
  type Presence,
  type PrinterStatusMessage,
  type WorkNotice,
  TypedEvents,
} from '@dpp/shared';
import type { Logger } from '../log.js';
import { backoffMs } from '../util/time.js';
import type { MqttLoginSource } from './login.js';

export type MqttState = 'disabled' | 'connecting' | 'connected' | 'disconnected';

export type MqttLinkEvents = {
  work: [notice: WorkNotice];
  state: [state: MqttState, detail?: string];
};

export interface MqttLinkOptions {
  url: string;
  deviceId: string;
  tenantId: string;
  login: MqttLoginSource;
  printers: string[];
  agentVersion: string;
  log: Logger;
  connectTimeoutMs?: number;
  minReconnectMs?: number;
  maxReconnectMs?: number;
}

export class MqttLink {
  readonly events: TypedEvents<MqttLinkEvents>;
  private client: MqttClient | null = null;
  private current: MqttState = 'disconnected';
  private stopped = true;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  private readonly topics: DeviceTopics;
  private readonly statuses = new Map<string, PrinterStatusMessage>();

  constructor(private readonly opts: MqttLinkOptions) {
    this.topics = deviceTopics(opts.tenantId, opts.deviceId);
    this.events = new TypedEvents<MqttLinkEvents>((event, err) =>
      opts.log.error({ event, err }, 'mqtt listener failed'),
    );
  }

  get state(): MqttState {
    return this.current;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.connect();
  }

  /** Remembers a printer's status and publishes it (retained) when connected. */
  publishPrinterStatus(message: PrinterStatusMessage): void {
    const previous = this.statuses.get(message.printer);
    this.statuses.set(message.printer, message);
    if (
      previous &&
      previous.state === message.state &&
      previous.jobRef === message.jobRef &&
      previous.detail === message.detail
    )
      return;
    this.publishStatus(message);
  }

  private publishStatus(message: PrinterStatusMessage): void {
    if (this.current !== 'connected' || !this.client) return;
    this.client.publish(
      this.topics.printerStatus(message.printer),
      JSON.stringify(message),
      { qos: 1, retain: true },
      (err) => {
        if (err)
          this.opts.log.warn({ err: err.message, printer: message.printer }, 'printer status not published');
      },
    );
  }

  private presence(status: Presence['status']): string {
    const p: Presence = {
      status,
      at: new Date().toISOString(),
      agentVersion: this.opts.agentVersion,
      printers: this.opts.printers,
    };
    return JSON.stringify(p);
  }

  private setState(state: MqttState, detail?: string): void {
    if (this.current === state) return;
    this.current = state;
    this.opts.log.info({ state, detail }, 'mqtt');
    this.events.emit('state', state, detail);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.setState('connecting');
    let login: { username: string; password: string };
    try {
      login = await this.opts.login.login();
    } catch (err) {
      this.retry(`no broker login: ${(err as Error).message}`);
      return;
    }
    if (this.stopped) return;
    const client = mqtt.connect(this.opts.url, {
      clientId: `dpp-agent-${this.opts.deviceId}`,
      username: login.username,
      password: login.password,
      protocolVersion: 4,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 0,
      connectTimeout: this.opts.connectTimeoutMs ?? 5000,
      will: {
        topic: this.topics.presence,
        payload: Buffer.from(this.presence('offline')),
        qos: 1,
        retain: true,
      },
    });
    this.client = client;
    let lastError: string | undefined;
    client.on('connect', () => {
      this.failures = 0;
      client.subscribe(this.topics.workNotice, { qos: 1 }, (err, granted) => {
        if (err || granted?.some((g) => g.qos === 128))
          this.opts.log.error({ err: err?.message }, 'work notice subscription refused');
      });
      client.publish(this.topics.presence, this.presence('online'), { qos: 1, retain: true });
      this.setState('connected');
      for (const s of this.statuses.values()) this.publishStatus(s);
    });
    client.on('message', (topic, payload) => {
      if (topic !== this.topics.workNotice) return;
      try {
        const notice = WorkNoticeSchema.parse(JSON.parse(payload.toString('utf8')));
        this.events.emit('work', notice);
      } catch (err) {
        this.opts.log.warn({ err: (err as Error).message }, 'malformed work notice ignored');
      }
    });
    client.on('error', (err) => {
      lastError = err.message;
      // CONNACK 4 (bad user name or password) / 5 (not authorized): the login may be stale.
      if ('code' in err && (err.code === 4 || err.code === 5)) this.opts.login.invalidate();
    });
    client.on('close', () => {
      if (this.client !== client) return;
      this.client = null;
      client.removeAllListeners();
      client.on('error', () => {});
      client.end(true);
      if (this.stopped) return;
      this.retry(lastError ?? 'connection closed');
    });
  }

  private retry(detail: string): void {
    this.setState('disconnected', detail);
    const wait = backoffMs(
      this.failures++,
      this.opts.minReconnectMs ?? 1000,
      this.opts.maxReconnectMs ?? 30_000,
    );
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, wait);
  }

  /** Says `offline` (retained) and closes the session. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    if (client) {
      if (this.current === 'connected') {
        await new Promise<void>((resolve) =>
          client.publish(this.topics.presence, this.presence('offline'), { qos: 1, retain: true }, () =>
            resolve(),
          ),
        );
      }
      client.removeAllListeners();
      client.on('error', () => {});
      await new Promise<void>((resolve) => client.end(false, {}, () => resolve()));
    }
    this.setState('disconnected', 'stopped');
  }
}
