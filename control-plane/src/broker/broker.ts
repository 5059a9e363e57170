/** How the control plane talks MQTT, embedded broker or external. */
export interface Broker {
  /** The URL devices connect to (given at enrollment); null when MQTT is off. */
  readonly deviceUrl: string | null;
  publish(topic: string, payload: unknown, opts: { qos: 0 | 1; retain?: boolean }): Promise<void>;
  /** Closes every MQTT session of a device (after revocation). A no-op for an external broker. */
  disconnectDevice(deviceId: string): void;
  close(): Promise<void>;
}

/** MQTT turned off (MQTT_PORT=0 and no MQTT_URL): notices are dropped; devices fall back to polling. */
export const noBroker: Broker = {
  deviceUrl: null,
  publish: async () => undefined,
  disconnectDevice: () => undefined,
  close: async () => undefined,
};
