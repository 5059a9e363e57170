import { createHmac, randomUUID } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { deviceBrokerRules } from '@dpp/shared';

/**
 * Mosquitto's dynamic-security plugin, administered over MQTT: commands go to `$CONTROL/dynamic-security/v1`
 * as `{ commands: [...] }`, answers come back on `.../response`, matched by `correlationData` (every replica
 * reads every answer, so each command carries its own id). See mosquitto.org/documentation/dynamic-security.
 */
const COMMAND_TOPIC = '$CONTROL/dynamic-security/v1';
const RESPONSE_TOPIC = `${COMMAND_TOPIC}/response`;

interface Command {
  command: string;
  [field: string]: unknown;
}

interface Answer {
  command: string;
  error?: string;
  data?: unknown;
  correlationData?: string;
}

/** A command the broker refused; `reason` is its error text ("Client not found", ...). */
export class DynamicSecurityError extends Error {
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(`dynamic security refused ${command}: ${reason}`);
    this.name = 'DynamicSecurityError';
  }
}

/** A device's broker identity: username = device id, one role of its own. */
export const deviceRoleName = (deviceId: string) => `dpp-device-${deviceId}`;

/**
 * The ACL of a device's role, the same as the embedded broker's: subscribe and receive only inside its own
 * subtree, publish only its presence and its printers' status. Everything else falls to the default ACL
 * access the shipped configuration keeps (publish and subscribe denied).
 */
export function deviceAcls(tenantId: string, deviceId: string) {
  return deviceBrokerRules(tenantId, deviceId).flatMap(({ action, topic }) =>
    (action === 'subscribe' ? ['subscribePattern', 'publishClientReceive'] : ['publishClientSend']).map(
      (acltype) => ({ acltype, topic, priority: 0, allow: true }),
    ),
  );
}

/**
 * A device's broker password: HMAC-SHA256 under MQTT_DEVICE_SECRET of its id and its key's thumbprint. Every
 * replica derives the same one and none is stored; rotating the device key changes it, and so does rotating
 * the secret (each device's login is brought up to date the next time it asks for it).
 */
export function deviceBrokerPassword(secret: string, deviceId: string, keyThumbprint: string): string {
  return createHmac('sha256', secret)
    .update(`dpp-mqtt-device-v1\0${deviceId}\0${keyThumbprint}`)
    .digest('base64url');
}

export class DynamicSecurity {
  private readonly waiting = new Map<string, (answer: Answer) => void>();

  constructor(
    private readonly client: MqttClient,
    private readonly timeoutMs = 5_000,
  ) {
    client.on('message', (topic, payload) => {
      if (topic !== RESPONSE_TOPIC) return;
      let answers: Answer[];
      try {
        answers = (JSON.parse(payload.toString('utf8')) as { responses?: Answer[] }).responses ?? [];
      } catch {
        return;
      }
      for (const a of answers) {
        const done = a.correlationData ? this.waiting.get(a.correlationData) : undefined;
        if (done) done(a);
      }
    });
  }

  /** Subscribes to the answers; refuses when the broker will not let this login administer it. */
  async open(): Promise<void> {
    const granted = await this.client.subscribeAsync(RESPONSE_TOPIC, { qos: 1 });
    if (granted.some((g) => g.qos === 128))
      throw new Error(`the broker refused a subscription to ${RESPONSE_TOPIC}`);
    await this.run([{ command: 'getDefaultACLAccess' }]);
  }

  /**
   * Sends the commands in one message and resolves with their answers in order (an answer may carry an
   * `error`; the caller decides which ones matter). Rejects when the broker does not answer them all.
   */
  async run(commands: Command[]): Promise<Answer[]> {
    const ids = commands.map(() => randomUUID());
    const answers = ids.map(
      (id) =>
        new Promise<Answer>((resolve, reject) => {
          const timer = setTimeout(() => {
            this.waiting.delete(id);
            reject(
              new Error(`the broker did not answer dynamic-security commands within ${this.timeoutMs} ms`),
            );
          }, this.timeoutMs);
          this.waiting.set(id, (a) => {
            clearTimeout(timer);
            this.waiting.delete(id);
            resolve(a);
          });
        }),
    );
    const sent = commands.map((c, i) => ({ ...c, correlationData: ids[i] }));
    try {
      await this.client.publishAsync(COMMAND_TOPIC, JSON.stringify({ commands: sent }), { qos: 1 });
    } catch (err) {
      for (const id of ids) this.waiting.get(id)?.({ command: 'publish', error: String(err) });
    }
    return Promise.all(answers);
  }

  /**
   * Creates the device's role and client, or brings them up to date (password, ACL, role membership). Safe to
   * repeat; a device whose login was removed by a sweep gets it back only through this.
   */
  async admitDevice(d: { tenantId: string; deviceId: string; password: string }): Promise<void> {
    const rolename = deviceRoleName(d.deviceId);
    const acls = deviceAcls(d.tenantId, d.deviceId);
    const [role, client] = await this.run([
      { command: 'createRole', rolename, acls },
      {
        command: 'createClient',
        username: d.deviceId,
        password: d.password,
        roles: [{ rolename, priority: 0 }],
      },
    ]);
    const followUp: Command[] = [];
    if (role!.error) {
      if (!/exists/i.test(role!.error)) throw new DynamicSecurityError('createRole', role!.error);
      // The role was there already: make its ACL the current one (an ACL that is there answers an error).
      for (const acl of acls) followUp.push({ command: 'addRoleACL', rolename, ...acl });
    }
    if (client!.error) {
      if (!/exists/i.test(client!.error)) throw new DynamicSecurityError('createClient', client!.error);
      followUp.push({
        command: 'modifyClient',
        username: d.deviceId,
        password: d.password,
        roles: [{ rolename, priority: 0 }],
      });
    }
    if (followUp.length === 0) return;
    const answers = await this.run(followUp);
    const modify = answers.find((a) => a.command === 'modifyClient');
    if (modify?.error) throw new DynamicSecurityError('modifyClient', modify.error);
  }

  /** Deletes the device's client (which ends its live sessions) and its role; a missing one is fine. */
  async removeDevice(deviceId: string): Promise<void> {
    const [client, role] = await this.run([
      { command: 'deleteClient', username: deviceId },
      { command: 'deleteRole', rolename: deviceRoleName(deviceId) },
    ]);
    for (const a of [client!, role!])
      if (a.error && !/not found/i.test(a.error)) throw new DynamicSecurityError(a.command, a.error);
  }

  /** Usernames of the broker's clients that have a device role (what the control plane administers). */
  async deviceClients(): Promise<string[]> {
    const [answer] = await this.run([{ command: 'listRoles', verbose: false, count: -1 }]);
    if (answer!.error) throw new DynamicSecurityError('listRoles', answer!.error);
    const roles = (answer!.data as { roles?: string[] } | undefined)?.roles ?? [];
    const prefix = deviceRoleName('');
    return roles.filter((r) => r.startsWith(prefix)).map((r) => r.slice(prefix.length));
  }
}
