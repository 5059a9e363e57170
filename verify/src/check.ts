/**
 * Checks every seal of a proof link by link (label-proof.md, "Checking a proof, link by link"). Each link is
 * judged on its own, so one broken link names itself and the others still say what they can.
 */
import { checkDeviceStatement, checkEvidenceBundle } from './check-device.js';
import { checkLogEntry, checkTreeHead } from './check-log.js';
import { checkEpcisEvent, checkPassportVersion, checkSealReceipt } from './check-seal.js';
import type { DigitalLink } from './digital-link.js';
import type { ControlPlaneKey } from './keys.js';
import { logUrlOf, type LabelProof } from './proof.js';
import { judge, type LinkResult } from './result.js';
import { SealContext, type VerifiedHead } from './seal-context.js';

export interface SealCheck {
  jobRef: string;
  /** Device statement to tree head; the log consistency link is added once all heads are known. */
  links: LinkResult[];
  /** The seal's tree head, when it verified. */
  head: VerifiedHead | undefined;
}

export async function checkSeals(
  proof: LabelProof,
  keys: readonly ControlPlaneKey[] | null,
  scanned: DigitalLink | undefined,
): Promise<SealCheck[]> {
  const logUrl = logUrlOf(proof);
  const out: SealCheck[] = [];
  for (const [index, seal] of proof.seals.entries()) {
    const ctx = new SealContext(proof, seal, index, keys, logUrl, scanned);
    const links = [
      await judge('device statement', () => checkDeviceStatement(ctx)),
      await judge('evidence bundle', () => checkEvidenceBundle(ctx)),
      await judge('passport version', () => checkPassportVersion(ctx)),
      await judge('seal receipt', () => checkSealReceipt(ctx)),
      await judge('EPCIS event', () => checkEpcisEvent(ctx)),
      await judge('log entry', () => checkLogEntry(ctx)),
      await judge('tree head', () => checkTreeHead(ctx)),
    ];
    out.push({
      jobRef: typeof seal.jobRef === 'string' ? seal.jobRef : `seal ${index + 1}`,
      links,
      head: ctx.head,
    });
  }
  return out;
}
