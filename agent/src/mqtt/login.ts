/**
 * Where the agent's broker login comes from: POST /devices/{id}/mqtt-credentials says how this control plane's
 * broker takes devices. With `access_token` the password is a fresh access token on every connect; with
 * `password` it is the device's own login, kept until the broker refuses it (a rotated key, a rotated secret),
 * then asked for again. The control plane creates that login on the broker when it answers, so asking again
 * also repairs a broker that lost it.
 */
import type { MqttCredentials } from '@dpp/shared';
import type { TokenSource } from '../identity/index.js';

export interface MqttLogin {
  username: string;
  password: string;
}

export interface MqttLoginSource {
  login(): Promise<MqttLogin>;
  /** The broker refused the last login: ask again next time. */
  invalidate(): void;
}

export class BrokerLogin implements MqttLoginSource {
  private credentials: MqttCredentials | null = null;

  constructor(
    private readonly opts: {
      deviceId: string;
      tokens: TokenSource;
      fetchCredentials: (deviceId: string) => Promise<MqttCredentials>;
    },
  ) {}

  async login(): Promise<MqttLogin> {
    const c = (this.credentials ??= await this.opts.fetchCredentials(this.opts.deviceId));
    if (c.auth === 'password' && c.password !== null) return { username: c.username, password: c.password };
    return { username: c.username, password: await this.opts.tokens.token() };
  }

  invalidate(): void {
    this.credentials = null;
    this.opts.tokens.invalidate();
  }
}
