/** Links 4 to 6: the passport version, the seal receipt and the EPCIS commissioning event. */
import { sameUrl } from './digital-link.js';
import { canonicalJson, sha256Hex } from './jcs.js';
import { TYP, verifyJws } from './jws.js';
import { assertSignedInWindow, controlPlaneKey } from './keys.js';
import { renderedRfidEpc } from './carriers.js';
import { companyPrefixLengthOf, decodeSgtin, sgtinPureIdentityUri } from './sgtin.js';
import { Broken, isObject, obj, str, strOrNull, time } from './shape.js';
import type { SealContext } from './seal-context.js';

const short = (hash: string): string => `${hash.slice(0, 12)}…`;

function readVersion(v: unknown, what: string): { id: string; contentHash: string; merkleRoot: string } {
  const o = obj(v, what);
  const hex = (k: string): string => {
    const h = str(o, k, what);
    if (!/^[0-9a-f]{64}$/.test(h)) throw new Broken(`${what}.${k} is not a SHA-256`);
    return h;
  };
  return { id: str(o, 'id', what), contentHash: hex('contentHash'), merkleRoot: hex('merkleRoot') };
}

/** Link 4: the version the bundle names is the one the seal lists and the receipt names. */
export function checkPassportVersion(ctx: SealContext): string {
  const inBundle = ctx.bundle.passportVersion;
  const inSeal = ctx.seal.passportVersion;
  if (inBundle == null && inSeal == null) {
    throw new Broken('the bundle names no passport version (a label sealed before versions were recorded)');
  }
  const bundleVersion = readVersion(inBundle, 'the bundle');
  const sealVersion = readVersion(inSeal, 'the seal');
  if (canonicalJson(bundleVersion) !== canonicalJson(sealVersion)) {
    throw new Broken(
      `the bundle names version ${bundleVersion.id} (${short(bundleVersion.contentHash)}), ` +
        `the seal lists ${sealVersion.id} (${short(sealVersion.contentHash)})`,
    );
  }
  if (ctx.receipt.passportVersionId !== bundleVersion.id) {
    throw new Broken(
      `the receipt names version ${String(ctx.receipt.passportVersionId)}, the bundle ${bundleVersion.id}`,
    );
  }
  return (
    `version ${bundleVersion.id}, content ${short(bundleVersion.contentHash)}, ` +
    `Merkle root ${short(bundleVersion.merkleRoot)}`
  );
}

function assertSame(field: string, receipt: unknown, other: unknown, otherName: string): void {
  if (receipt !== other) {
    throw new Broken(`the receipt's ${field} is ${String(receipt)}, ${otherName} says ${String(other)}`);
  }
}

/** Link 5: countersigned by the control plane; the bundle's hash; the same job, device, label and version. */
export async function checkSealReceipt(ctx: SealContext): Promise<string> {
  const keys = ctx.requireKeys();
  const bundleJws = ctx.seal.evidenceBundle;
  const { payload: r, kid } = await verifyJws(
    ctx.seal.sealReceipt,
    TYP.sealReceipt,
    (k) => controlPlaneKey(keys, k)?.jwk,
  );
  const sealedAt = time(r, 'sealedAt', 'receipt');
  assertSignedInWindow(controlPlaneKey(keys, kid)!, sealedAt, 'sealed at');
  ctx.assertIssuer(r, 'the receipt');
  const bundleSha256 = typeof bundleJws === 'string' ? sha256Hex(Buffer.from(bundleJws, 'ascii')) : null;
  assertSame('bundleSha256', str(r, 'bundleSha256', 'receipt'), bundleSha256, "the bundle's SHA-256");
  const b = ctx.bundle;
  assertSame('jobRef', str(r, 'jobRef', 'receipt'), b.jobRef, 'the bundle');
  assertSame('jobRef', r.jobRef, ctx.seal.jobRef, 'the seal');
  assertSame('attemptId', str(r, 'attemptId', 'receipt'), b.attemptId, 'the bundle');
  assertSame('deviceId', str(r, 'deviceId', 'receipt'), b.deviceId, 'the bundle');
  const label = ctx.proof.label;
  assertSame('gtin', str(r, 'gtin', 'receipt'), label.gtin, 'the label');
  assertSame('serial', str(r, 'serial', 'receipt'), label.serial, 'the label');
  assertSame('digitalLink', str(r, 'digitalLink', 'receipt'), label.digitalLink, 'the label');
  const version = isObject(b.passportVersion) ? b.passportVersion.id : null;
  assertSame('passportVersionId', strOrNull(r, 'passportVersionId', 'receipt'), version, 'the bundle');
  return `countersigned by control-plane key ${kid} at ${new Date(sealedAt).toISOString()}; bundle SHA-256 ${short(bundleSha256!)}`;
}

const COMMISSIONING = new Set([
  'commissioning',
  'urn:epcglobal:cbv:bizstep:commissioning',
  'https://ref.gs1.org/cbv/BizStep-commissioning',
]);

/** The SGTIN URI the event must commission: from the label's EPC, else from the receipt's GTIN and serial. */
function expectedEpcUri(ctx: SealContext, epcList: string[]): string {
  const render = isObject(ctx.bundle.renderManifest) ? ctx.bundle.renderManifest : {};
  const epc =
    renderedRfidEpc(render) ?? (typeof render.sgtin96Epc === 'string' ? render.sgtin96Epc : undefined);
  if (epc !== undefined) return decodeSgtin(epc).pureIdentityUri;
  const length = epcList.map(companyPrefixLengthOf).find((l) => l !== null);
  if (length === undefined) throw new Broken('its epcList holds no SGTIN');
  return sgtinPureIdentityUri(String(ctx.receipt.gtin), String(ctx.receipt.serial), length);
}

/** Link 6: hashes to the receipt's; commissions the label's EPC; its certificationInfo is this proof. */
export function checkEpcisEvent(ctx: SealContext): string {
  const event = ctx.seal.epcisEvent;
  const ref = ctx.receipt.epcisEvent;
  if (event == null && ref == null) {
    if (ctx.index === 0) throw new Broken('the first seal records no commissioning event');
    return 'none: a reprint; the serial was commissioned at its first seal';
  }
  if (event == null) throw new Broken('the receipt names an event the seal does not carry');
  if (ref == null) throw new Broken('the seal carries an event the receipt does not name');
  const e = obj(event, 'the event');
  const named = obj(ref, "the receipt's epcisEvent");
  const sha256 = sha256Hex(canonicalJson(e));
  if (sha256 !== named.sha256) {
    throw new Broken(
      `its canonical JSON hashes to ${short(sha256)}, the receipt says ${String(named.sha256)}`,
    );
  }
  const eventId = str(e, 'eventID', 'the event');
  if (eventId !== named.eventId)
    throw new Broken(`its eventID is ${eventId}, the receipt names ${String(named.eventId)}`);
  if (e.type !== 'ObjectEvent') throw new Broken(`it is a ${String(e.type)}, not an ObjectEvent`);
  if (e.action !== 'ADD') throw new Broken(`its action is ${String(e.action)}, not ADD`);
  if (typeof e.bizStep !== 'string' || !COMMISSIONING.has(e.bizStep)) {
    throw new Broken(`its bizStep is ${String(e.bizStep)}, not commissioning`);
  }
  const epcList = Array.isArray(e.epcList) ? e.epcList.filter((x): x is string => typeof x === 'string') : [];
  const uri = expectedEpcUri(ctx, epcList);
  if (!epcList.includes(uri)) throw new Broken(`its epcList does not hold the label's ${uri}`);
  const info = e.certificationInfo;
  const infos = Array.isArray(info) ? info : [info];
  const proofUrl = ctx.proofUrl();
  if (!infos.some((i) => typeof i === 'string' && sameUrl(i, proofUrl))) {
    throw new Broken(`its certificationInfo does not name this proof (${proofUrl})`);
  }
  return `commissioning ObjectEvent ${eventId} of ${uri}; certificationInfo names this proof`;
}
