/**
 * How a device logs in to the broker: `access_token` (username = device id, password = a fresh access token;
 * the embedded broker checks it, EMQX's JWT authenticator can) or `password` (the control plane administers a
 * login per device on the broker: Mosquitto's dynamic security).
 */
export type DeviceBrokerAuth = 'access_token' | 'password';

/** A device's own broker login, as POST /devices/{id}/mqtt-credentials hands it out. */
export interface DeviceBrokerLogin {
  username: string;
  /** null with `access_token`: the device sends a fresh access token. */
  password: string | null;
}

/** How the control plane talks MQTT, embedded broker or external. */
export interface Broker {
  /** The URL devices connect to (given at enrollment); null when MQTT is off. */
  readonly deviceUrl: string | null;
  readonly deviceAuth: DeviceBrokerAuth;
  publish(topic: string, payload: unknown, opts: { qos: 0 | 1; retain?: boolean }): Promise<void>;
  /**
   * The device's login, created or brought up to date on the broker first when the control plane administers
   * logins (its password follows from the device's current key).
   */
  admitDevice(device: {
    tenantId: string;
    deviceId: string;
    keyThumbprint: string;
  }): Promise<DeviceBrokerLogin>;
  /** After a revocation: closes every MQTT session of the device and removes any login it has on the broker. */
  revokeDevice(deviceId: string): Promise<void>;
  /**
   * Removes broker logins of devices that are no longer active (a revocation whose broker call failed);
   * `active` answers which of the given ids are. Resolves with how many it removed (0 without logins).
   */
  sweepDevices(active: (ids: string[]) => Promise<Set<string>>): Promise<number>;
  close(): Promise<void>;
}

/** The login of a broker that checks access tokens itself. */
export const accessTokenLogin = (deviceId: string): DeviceBrokerLogin => ({
  username: deviceId,
  password: null,
});

/** MQTT turned off (MQTT_PORT=0 and no MQTT_URL): notices are dropped; devices fall back to polling. */
export const noBroker: Broker = {
  deviceUrl: null,
  deviceAuth: 'access_token',
  publish: async () => undefined,
  admitDevice: async (d) => accessTokenLogin(d.deviceId),
  revokeDevice: async () => undefined,
  sweepDevices: async () => 0,
  close: async () => undefined,
};
