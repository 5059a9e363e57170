/** Tables of the devices, OAuth and signing-key domains (migration 0006). */
export interface SigningKeyTable {
  kid: string;
  alg: string;
  private_jwk: string;
  public_jwk: string;
  created_at: string;
  retired_at: string | null;
}

export interface EnrollmentTokenTable {
  id: string;
  tenant_id: string;
  token_hash: string;
  label: string | null;
  site: string | null;
  printer_names: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  device_id: string | null;
  created_by: string | null;
}

export interface DeviceTable {
  id: string;
  tenant_id: string;
  name: string;
  site: string | null;
  printer_names: string;
  facts: string;
  public_jwk: string;
  key_thumbprint: string;
  status: string;
  enrolled_at: string;
  key_rotated_at: string | null;
  revoked_at: string | null;
  last_seen_at: string | null;
}

export interface OauthAssertionTable {
  client_id: string;
  jti: string;
  expires_at: string;
}

/** A public key a device has had (migration 0018); `valid_until` null for its current key. */
export interface DeviceKeyTable {
  device_id: string;
  thumbprint: string;
  public_jwk: string;
  valid_from: string;
  valid_until: string | null;
}

export interface DeviceTables {
  signing_keys: SigningKeyTable;
  device_keys: DeviceKeyTable;
  enrollment_tokens: EnrollmentTokenTable;
  devices: DeviceTable;
  oauth_assertions: OauthAssertionTable;
}
