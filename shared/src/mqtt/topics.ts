/**
 * MQTT topics, defined once for the control plane and the agent. Every topic of a device lives under
 * `dpp/{tenantId}/devices/{deviceId}/`, and the broker lets a device read and write only its own subtree.
 *
 * @example
 * deviceTopics('t1', 'd1').workNotice // 'dpp/t1/devices/d1/notices/work'
 */
export const MQTT_ROOT = 'dpp';

/** A topic level must not contain the separator or wildcards (MQTT 3.1.1 §4.7). */
export function isTopicLevel(s: string): boolean {
  return s.length > 0 && s.length <= 128 && !/[/+#]/.test(s) && !s.includes(String.fromCharCode(0));
}

export function devicePrefix(tenantId: string, deviceId: string): string {
  if (!isTopicLevel(tenantId) || !isTopicLevel(deviceId))
    throw new Error('tenant and device ids must be topic levels');
  return `${MQTT_ROOT}/${tenantId}/devices/${deviceId}/`;
}

export interface DeviceTopics {
  /** Control plane -> device: print work is waiting (QoS 1, not retained). */
  workNotice: string;
  /** Device -> all: online/offline, retained, with a last will of offline. */
  presence: string;
  /** Device -> all: one printer's status, retained. */
  printerStatus(printer: string): string;
  /** Everything the device may subscribe to. */
  all: string;
}

export function deviceTopics(tenantId: string, deviceId: string): DeviceTopics {
  const p = devicePrefix(tenantId, deviceId);
  return {
    workNotice: `${p}notices/work`,
    presence: `${p}presence`,
    printerStatus: (printer: string) => {
      if (!isTopicLevel(printer)) throw new Error(`printer name "${printer}" cannot be a topic level`);
      return `${p}printers/${printer}/status`;
    },
    all: `${p}#`,
  };
}

/**
 * What a device may do on the broker, and nothing else: subscribe inside its own subtree, publish its presence
 * and its printers' status. Every broker's rules derive from this list: the embedded broker's checks, the
 * dynamic-security role the control plane administers on Mosquitto, and the `acl` claim of a device access
 * token that EMQX's JWT authenticator reads.
 */
export function deviceBrokerRules(
  tenantId: string,
  deviceId: string,
): { action: 'subscribe' | 'publish'; topic: string }[] {
  const p = devicePrefix(tenantId, deviceId);
  return [
    { action: 'subscribe', topic: `${p}#` },
    { action: 'publish', topic: `${p}presence` },
    { action: 'publish', topic: `${p}printers/+/status` },
  ];
}

/** Splits a device topic; `null` for anything outside `dpp/{tenant}/devices/{device}/...`. */
export function parseDeviceTopic(topic: string): { tenantId: string; deviceId: string; rest: string } | null {
  const m = /^dpp\/([^/+#]+)\/devices\/([^/+#]+)\/(.+)$/.exec(topic);
  return m ? { tenantId: m[1]!, deviceId: m[2]!, rest: m[3]! } : null;
}

/**
 * Whether a topic or topic filter stays inside the device's own subtree: the literal prefix must come
 * before any wildcard, so `dpp/+/devices/#` or `dpp/t1/#` never pass.
 */
export function isWithinDeviceSubtree(topicOrFilter: string, tenantId: string, deviceId: string): boolean {
  const prefix = devicePrefix(tenantId, deviceId);
  return topicOrFilter.startsWith(prefix) && topicOrFilter.length > prefix.length;
}
