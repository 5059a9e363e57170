import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  type Ed25519PublicJwk,
  ENROLLMENT_PROOF_AUDIENCE,
  ENROLLMENT_PROOF_TYPE,
  type DeviceStatementPayload,
  type EnrollRequest,
  devicePrefix,
} from '@dpp/shared';
import { type AuditContext } from '../tenants/index.js';
import { recordAudit } from '../audit/index.js';
import { ApiError } from '../http/index.js';
import type { Db, DeviceTable, EnrollmentTokenTable } from '../store/index.js';
import { thumbprint, tokenHash, verifyDeviceSignedJwt } from './proof.js';

export interface DeviceView {
  id: string;
  name: string;
  site: string | null;
  printerNames: string[];
  facts: Record<string, unknown>;
  status: 'active' | 'revoked';
  keyThumbprint: string;
  enrolledAt: string;
  keyRotatedAt: string | null;
  revokedAt: string | null;
  lastSeenAt: string | null;
}

export type DeviceStatementFacts = Omit<DeviceStatementPayload, 'iss' | 'issuedAt'>;

export interface EnrollmentTokenView {
  id: string;
  label: string | null;
  site: string | null;
  printerNames: string[];
  createdAt: string;
  expiresAt: string;
  usedAt: string | null;
  deviceId: string | null;
  status: 'pending' | 'used' | 'expired';
}

export function deviceView(r: DeviceTable): DeviceView {
  return {
    id: r.id,
    name: r.name,
    site: r.site,
    printerNames: JSON.parse(r.printer_names) as string[],
    facts: JSON.parse(r.facts) as Record<string, unknown>,
    status: r.status === 'revoked' ? 'revoked' : 'active',
    keyThumbprint: r.key_thumbprint,
    enrolledAt: r.enrolled_at,
    keyRotatedAt: r.key_rotated_at,
    revokedAt: r.revoked_at,
    lastSeenAt: r.last_seen_at,
  };
}

function tokenView(r: EnrollmentTokenTable, now: number): EnrollmentTokenView {
  return {
    id: r.id,
    label: r.label,
    site: r.site,
    printerNames: JSON.parse(r.printer_names) as string[],
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    usedAt: r.used_at,
    deviceId: r.device_id,
    status: r.used_at ? 'used' : Date.parse(r.expires_at) <= now ? 'expired' : 'pending',
  };
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export class DeviceService {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** A one-time, expiring token an admin hands to a device; the secret is shown once. */
  async createEnrollmentToken(
    tenantId: string,
    input: {
      label?: string | undefined;
      site?: string | undefined;
      printerNames?: string[] | undefined;
      expiresInSeconds: number;
    },
    audit: AuditContext,
  ): Promise<EnrollmentTokenView & { token: string }> {
    const token = `dpp_enr_${randomBytes(24).toString('base64url')}`;
    const t = this.now();
    const row: EnrollmentTokenTable = {
      id: randomUUID(),
      tenant_id: tenantId,
      token_hash: sha256(token),
      label: input.label ?? null,
      site: input.site ?? null,
      printer_names: JSON.stringify(input.printerNames ?? []),
      created_at: new Date(t).toISOString(),
      expires_at: new Date(t + input.expiresInSeconds * 1000).toISOString(),
      used_at: null,
      device_id: null,
      created_by: audit.actor.id,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('enrollment_tokens').values(row).execute();
      await recordAudit(trx, {
        tenantId,
        actor: audit.actor,
        action: 'enrollment_token.created',
        resource: { type: 'enrollment_token', id: row.id },
        correlationId: audit.correlationId,
        details: { site: row.site, expiresAt: row.expires_at },
      });
    });
    return { ...tokenView(row, t), token };
  }

  async listEnrollmentTokens(tenantId: string): Promise<EnrollmentTokenView[]> {
    const rows = await this.db
      .selectFrom('enrollment_tokens')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at', 'desc')
      .limit(200)
      .execute();
    return rows.map((r) => tokenView(r, this.now()));
  }

  /**
   * Enrolls a device: the token must be unused and unexpired, and `proof` must be a JWT signed by the
   * private key of `publicKeyJwk` (proof of possession) naming this token. The token is used up in the same
   * guarded statement, so two devices racing with one token cannot both enroll.
   */
  async enroll(req: EnrollRequest, correlationId: string): Promise<{ device: DeviceView; tenantId: string }> {
    const t = this.now();
    const nowIso = new Date(t).toISOString();
    const token = await this.db
      .selectFrom('enrollment_tokens')
      .selectAll()
      .where('token_hash', '=', sha256(req.token))
      .executeTakeFirst();
    if (!token || token.used_at || token.expires_at <= nowIso) {
      // One answer for unknown, used and expired: a token is a bearer secret.
      throw ApiError.plain(401, 'The enrollment token is unknown, used or expired');
    }
    await verifyDeviceSignedJwt(req.proof, req.publicKeyJwk, {
      typ: ENROLLMENT_PROOF_TYPE,
      audience: ENROLLMENT_PROOF_AUDIENCE,
      now: t,
      field: 'proof',
      claims: { token_hash: tokenHash(req.token) },
    });
    const kt = await thumbprint(req.publicKeyJwk);
    const boundPrinters = JSON.parse(token.printer_names) as string[];
    const row: DeviceTable = {
      id: randomUUID(),
      tenant_id: token.tenant_id,
      name: req.name,
      site: token.site,
      printer_names: JSON.stringify(boundPrinters.length ? boundPrinters : (req.facts.printers ?? [])),
      facts: JSON.stringify(req.facts),
      public_jwk: JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: req.publicKeyJwk.x }),
      key_thumbprint: kt,
      status: 'active',
      enrolled_at: nowIso,
      key_rotated_at: null,
      revoked_at: null,
      last_seen_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      const used = await trx
        .updateTable('enrollment_tokens')
        .set({ used_at: nowIso, device_id: row.id })
        .where('id', '=', token.id)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (Number(used.numUpdatedRows) !== 1)
        throw ApiError.plain(401, 'The enrollment token is unknown, used or expired');
      await trx.insertInto('devices').values(row).execute();
      await trx
        .insertInto('device_keys')
        .values({
          device_id: row.id,
          thumbprint: kt,
          public_jwk: row.public_jwk,
          valid_from: nowIso,
          valid_until: null,
        })
        .execute();
      await recordAudit(trx, {
        tenantId: row.tenant_id,
        actor: { type: 'device', id: row.id },
        action: 'device.enrolled',
        resource: { type: 'device', id: row.id },
        correlationId,
        details: { enrollmentTokenId: token.id, keyThumbprint: kt, facts: req.facts },
      });
    });
    return { device: deviceView(row), tenantId: row.tenant_id };
  }

  async list(tenantId: string): Promise<DeviceView[]> {
    const rows = await this.db
      .selectFrom('devices')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('enrolled_at', 'desc')
      .execute();
    return rows.map(deviceView);
  }

  async get(tenantId: string, id: string): Promise<DeviceView> {
    return deviceView(await this.row(tenantId, id));
  }

  /** The device row used by authentication; undefined when unknown. */
  findActive(id: string): Promise<DeviceTable | undefined> {
    return this.db
      .selectFrom('devices')
      .selectAll()
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst();
  }

  /**
   * What the control plane states about a device, for anyone verifying what it signed: its tenant, site,
   * enrollment and revocation times and every key it has had with the window it held it. Null when unknown.
   */
  async statement(id: string): Promise<DeviceStatementFacts | null> {
    const device = await this.db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirst();
    if (!device) return null;
    const keys = await this.db
      .selectFrom('device_keys')
      .selectAll()
      .where('device_id', '=', id)
      .orderBy('valid_from')
      .execute();
    return {
      deviceId: device.id,
      tenantId: device.tenant_id,
      site: device.site,
      enrolledAt: device.enrolled_at,
      revokedAt: device.revoked_at,
      keys: keys.map((k) => ({
        ...(JSON.parse(k.public_jwk) as { kty: 'OKP'; crv: 'Ed25519'; x: string }),
        kid: k.thumbprint,
        validFrom: k.valid_from,
        validUntil: k.valid_until,
      })),
    };
  }

  /** Which of these ids are active devices (of any tenant). */
  async activeAmong(ids: string[]): Promise<Set<string>> {
    const active = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await this.db
        .selectFrom('devices')
        .select('id')
        .where('id', 'in', ids.slice(i, i + 500))
        .where('status', '=', 'active')
        .execute();
      for (const r of rows) active.add(r.id);
    }
    return active;
  }

  /** Revokes a device: its tokens stop working at once (the caller also closes its MQTT session). */
  async revoke(tenantId: string, id: string, audit: AuditContext): Promise<DeviceView> {
    return this.db.transaction().execute(async (trx) => {
      const nowIso = new Date(this.now()).toISOString();
      const res = await trx
        .updateTable('devices')
        .set({ status: 'revoked', revoked_at: nowIso })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) {
        await this.row(tenantId, id, trx);
        throw new ApiError('ALREADY_REVOKED', 'This device is already revoked', { details: { id } });
      }
      await recordAudit(trx, {
        tenantId,
        actor: audit.actor,
        action: 'device.revoked',
        resource: { type: 'device', id },
        correlationId: audit.correlationId,
      });
      return deviceView(await this.row(tenantId, id, trx));
    });
  }

  /**
   * The device replaces its own key: it authenticates with its current token and proves possession of the
   * new key with a JWT signed by it. Tokens issued for the old key keep working until they expire.
   */
  async rotateKey(
    tenantId: string,
    id: string,
    input: { publicKeyJwk: Ed25519PublicJwk; proof: string },
    audit: AuditContext,
  ): Promise<DeviceView> {
    const t = this.now();
    await verifyDeviceSignedJwt(input.proof, input.publicKeyJwk, {
      typ: 'dpp-key-rotation+jwt',
      audience: 'urn:dpp:devices:rotate-key',
      now: t,
      field: 'proof',
      claims: { sub: id },
    });
    const kt = await thumbprint(input.publicKeyJwk);
    const before = await this.db
      .selectFrom('device_keys')
      .select('thumbprint')
      .where('device_id', '=', id)
      .where('thumbprint', '=', kt)
      .executeTakeFirst();
    if (before)
      throw ApiError.validation(
        'publicKeyJwk',
        'This key was the device’s before: a rotation moves to a key it never had',
      );
    const publicJwk = JSON.stringify({ kty: 'OKP', crv: 'Ed25519', x: input.publicKeyJwk.x });
    const at = new Date(t).toISOString();
    return this.db.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('devices')
        .set({ public_jwk: publicJwk, key_thumbprint: kt, key_rotated_at: at })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('status', '=', 'active')
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) throw ApiError.notFound('Device');
      // The old key stays on record with the window it was the device's, for what it signed then.
      await trx
        .updateTable('device_keys')
        .set({ valid_until: at })
        .where('device_id', '=', id)
        .where('valid_until', 'is', null)
        .execute();
      await trx
        .insertInto('device_keys')
        .values({ device_id: id, thumbprint: kt, public_jwk: publicJwk, valid_from: at, valid_until: null })
        .execute();
      await recordAudit(trx, {
        tenantId,
        actor: audit.actor,
        action: 'device.key_rotated',
        resource: { type: 'device', id },
        correlationId: audit.correlationId,
        details: { keyThumbprint: kt },
      });
      return deviceView(await this.row(tenantId, id, trx));
    });
  }

  async touch(id: string): Promise<void> {
    await this.db
      .updateTable('devices')
      .set({ last_seen_at: new Date(this.now()).toISOString() })
      .where('id', '=', id)
      .execute();
  }

  topicPrefix(tenantId: string, deviceId: string): string {
    return devicePrefix(tenantId, deviceId);
  }

  private async row(tenantId: string, id: string, db: Db = this.db): Promise<DeviceTable> {
    const row = await db
      .selectFrom('devices')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw ApiError.notFound('Device');
    return row;
  }
}
