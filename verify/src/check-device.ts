/**
 * Links 2 and 3: the device statement (the control plane says which keys the device had, when) and the
 * evidence bundle (the device says what it rendered, sent, read back and scanned).
 */
import { headerKid, TYP, verifyJws, type Ed25519Jwk } from './jws.js';
import { assertSignedInWindow, controlPlaneKey } from './keys.js';
import { checkCarriers, renderedRfidEpc } from './carriers.js';
import { decodeSgtin } from './sgtin.js';
import { Broken, inWindow, int, obj, optStr, str, strOrNull, time, timeOrNull, type Json } from './shape.js';
import type { SealContext } from './seal-context.js';

const iso = (ms: number): string => new Date(ms).toISOString();

interface DeviceKey {
  kid: string;
  jwk: Ed25519Jwk;
  validFrom: number;
  validUntil: number | null;
}

export interface DeviceStatement {
  deviceId: string;
  enrolledAt: number;
  revokedAt: number | null;
  keys: DeviceKey[];
}

function readStatement(
  p: Json,
): DeviceStatement & { tenantId: string; site: string | null; issuedAt: number } {
  const keys = p.keys;
  if (!Array.isArray(keys)) throw new Broken('the statement lists no keys');
  return {
    deviceId: str(p, 'deviceId', 'statement'),
    tenantId: str(p, 'tenantId', 'statement'),
    site: strOrNull(p, 'site', 'statement'),
    enrolledAt: time(p, 'enrolledAt', 'statement'),
    revokedAt: timeOrNull(p, 'revokedAt', 'statement'),
    issuedAt: time(p, 'issuedAt', 'statement'),
    keys: keys.map((k, i) => {
      const key = obj(k, `statement.keys[${i}]`);
      if (key.kty !== 'OKP' || key.crv !== 'Ed25519') throw new Broken(`statement.keys[${i}] is not Ed25519`);
      return {
        kid: str(key, 'kid', `statement.keys[${i}]`),
        jwk: { kty: 'OKP', crv: 'Ed25519', x: str(key, 'x', `statement.keys[${i}]`) },
        validFrom: time(key, 'validFrom', `statement.keys[${i}]`),
        validUntil: timeOrNull(key, 'validUntil', `statement.keys[${i}]`),
      };
    }),
  };
}

/** Link 2: signed by the control plane inside its key's window; names the bundle's device. */
export async function checkDeviceStatement(ctx: SealContext): Promise<string> {
  const keys = ctx.requireKeys();
  const { payload, kid } = await verifyJws(
    ctx.seal.deviceStatement,
    TYP.deviceStatement,
    (k) => controlPlaneKey(keys, k)?.jwk,
  );
  const s = readStatement(payload);
  assertSignedInWindow(controlPlaneKey(keys, kid)!, s.issuedAt, 'issued at');
  ctx.assertIssuer(payload, 'the statement');
  // A bundle too damaged to read is the bundle's link to report; a readable one must name this device.
  const bundleDevice = ctx.bundle.deviceId;
  if (bundleDevice !== undefined && bundleDevice !== s.deviceId) {
    throw new Broken(`it is about device ${s.deviceId}, the bundle names ${String(bundleDevice)}`);
  }
  ctx.statement = s;
  const revoked = s.revokedAt === null ? 'not revoked' : `revoked ${iso(s.revokedAt)}`;
  const site = s.site === null ? '' : `, site ${s.site}`;
  return (
    `device ${s.deviceId} of tenant ${s.tenantId}${site}, enrolled ${iso(s.enrolledAt)}, ${revoked}, ` +
    `${s.keys.length} key(s); signed by control-plane key ${kid}`
  );
}

function assertEqual(what: string, values: Record<string, unknown>): void {
  const entries = Object.entries(values);
  const [firstName, first] = entries[0]!;
  for (const [name, v] of entries.slice(1)) {
    if (v !== first)
      throw new Broken(`${what}: ${firstName} says ${String(first)}, ${name} says ${String(v)}`);
  }
}

/** The EPC the label carries, checked against every read of it, or undefined for a label without one. */
function checkEpc(ctx: SealContext, render: Json, attestation: Json, scan: Json): string | undefined {
  const sgtin96 = optStr(render, 'sgtin96Epc', 'renderManifest');
  const listed = renderedRfidEpc(render);
  if (sgtin96 !== undefined && listed !== undefined && sgtin96 !== listed) {
    throw new Broken(`the render names EPC ${sgtin96} and, among its carriers, ${listed}`);
  }
  const epc = listed ?? sgtin96;
  const readBack = optStr(attestation, 'epcReadBack', 'attestation');
  const scanned = optStr(scan, 'epcRead', 'scanResult');
  if (epc === undefined) {
    if (readBack !== undefined || scanned !== undefined)
      throw new Broken('an EPC was read but none was rendered');
    return undefined;
  }
  const sgtin = decodeSgtin(epc);
  if (sgtin.gtin !== ctx.proof.label.gtin || sgtin.serial !== ctx.proof.label.serial) {
    throw new Broken(
      `the rendered EPC ${epc} is GTIN ${sgtin.gtin} serial ${sgtin.serial}, the label is ` +
        `${ctx.proof.label.gtin} serial ${ctx.proof.label.serial}`,
    );
  }
  if (readBack === undefined && scanned === undefined) throw new Broken(`EPC ${epc} was never read back`);
  if (readBack !== undefined && readBack !== epc)
    throw new Broken(`EPC read back ${readBack}, rendered ${epc}`);
  if (scanned !== undefined && (scanned !== epc || scan.epcMatches === false)) {
    throw new Broken(`the scanner read EPC ${scanned}, rendered ${epc}`);
  }
  return epc;
}

/**
 * Link 3: signed by the device key its kid names, inside that key's window and while the device was enrolled;
 * names the label's Digital Link in the render and the scan and its EPC in the render and the reads; the
 * bytes sent are the bytes rendered.
 */
export async function checkEvidenceBundle(ctx: SealContext): Promise<string> {
  const s = ctx.statement;
  if (s === undefined)
    throw new Broken("the device statement did not verify, so the device's keys are unknown");
  const jws = ctx.seal.evidenceBundle;
  if (typeof jws !== 'string') throw new Broken('the seal has no evidence bundle');
  const kid = headerKid(jws);
  const key = s.keys.find((k) => k.kid === kid);
  if (key === undefined) throw new Broken(`its kid ${kid} is not a key of device ${s.deviceId}`);
  const { payload } = await verifyJws(jws, TYP.evidence, (k) => (k === key.kid ? key.jwk : undefined));
  const sealedAt = time(payload, 'sealedAt', 'bundle');
  if (!inWindow(sealedAt, key.validFrom, key.validUntil)) {
    const until = key.validUntil === null ? 'now' : iso(key.validUntil);
    throw new Broken(
      `sealed at ${iso(sealedAt)}, outside device key ${kid}'s window (${iso(key.validFrom)} to ${until})`,
    );
  }
  if (sealedAt < s.enrolledAt) throw new Broken(`sealed at ${iso(sealedAt)}, before the device was enrolled`);
  if (s.revokedAt !== null && sealedAt >= s.revokedAt) {
    throw new Broken(`sealed at ${iso(sealedAt)}, after the device was revoked at ${iso(s.revokedAt)}`);
  }
  assertEqual('device', { statement: s.deviceId, bundle: str(payload, 'deviceId', 'bundle') });
  const render = obj(payload.renderManifest, 'bundle.renderManifest');
  const spool = obj(payload.spoolReceipt, 'bundle.spoolReceipt');
  const attestation = obj(payload.attestation, 'bundle.attestation');
  const scan = obj(payload.scanResult, 'bundle.scanResult');
  assertEqual('Digital Link', {
    'the label': ctx.proof.label.digitalLink,
    'the render': str(render, 'digitalLink', 'renderManifest'),
    'the scan': str(scan, 'decodedLink', 'scanResult'),
  });
  if (render.qrVerified !== true || scan.linkMatches !== true) {
    throw new Broken('the render or the scan does not say the QR decoded to the link');
  }
  ctx.assertScannedLink();
  assertEqual('bytes sent', {
    'the render': str(render, 'payloadSha256', 'renderManifest'),
    'the spool receipt': str(spool, 'payloadSha256', 'spoolReceipt'),
  });
  assertEqual('size sent', {
    'the render': int(render, 'payloadBytes', 'renderManifest'),
    'the spool receipt': int(spool, 'bytes', 'spoolReceipt'),
  });
  const epc = checkEpc(ctx, render, attestation, scan);
  const carriers = checkCarriers(ctx.proof.label, render, attestation, scan);
  const tag = epc === undefined ? '' : `; EPC ${epc} read back`;
  const all = carriers === undefined ? '' : `; carriers ${carriers} each verified`;
  return (
    `printed by device ${s.deviceId} at ${iso(sealedAt)}, key ${kid}; ` +
    `${int(spool, 'bytes', 'spoolReceipt')} bytes sent as rendered; scanned ${ctx.proof.label.digitalLink}${tag}${all}`
  );
}
