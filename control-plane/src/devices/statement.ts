import { DEVICE_STATEMENT_TYPE, type DeviceStatementPayload, canonicalJsonBytes } from '@dpp/shared';
import type { Keyring } from '../signing/index.js';
import type { DeviceService } from './devices.js';

export interface StatementDeps {
  devices: Pick<DeviceService, 'statement'>;
  keyring: Pick<Keyring, 'signCompact'>;
  issuer: string;
  now: () => number;
}

/**
 * The control plane's signed statement about a device (typ dpp-device-statement+jws): its tenant, site,
 * enrollment, revocation and every key it has had with its window. Null for an unknown device.
 */
export async function signedDeviceStatement(deps: StatementDeps, deviceId: string): Promise<string | null> {
  const facts = await deps.devices.statement(deviceId);
  if (!facts) return null;
  const payload: DeviceStatementPayload = {
    iss: deps.issuer,
    ...facts,
    issuedAt: new Date(deps.now()).toISOString(),
  };
  return deps.keyring.signCompact(canonicalJsonBytes(payload), DEVICE_STATEMENT_TYPE);
}
