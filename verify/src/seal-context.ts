/** What the checks of one seal share: the proof, the keys, the payloads of its JWS (read before verified). */
import type { DigitalLink } from './digital-link.js';
import { originOf, proofUrlOf } from './digital-link.js';
import { peekPayload } from './jws.js';
import type { ControlPlaneKey } from './keys.js';
import type { LabelProof } from './proof.js';
import { Broken, type Json } from './shape.js';
import type { DeviceStatement } from './check-device.js';

export interface VerifiedHead {
  log: string;
  treeSize: number;
  rootHash: string;
  timestamp: string;
  treeHead: string;
}

export class SealContext {
  /** Unverified payloads, to compare one link with the next; each link verifies its own. */
  readonly bundle: Json;
  readonly receipt: Json;
  /** Set once the device statement verified. */
  statement: DeviceStatement | undefined;
  /** Set once the seal's tree head verified. */
  head: VerifiedHead | undefined;

  constructor(
    readonly proof: LabelProof,
    readonly seal: Json,
    readonly index: number,
    private readonly keys: readonly ControlPlaneKey[] | null,
    readonly logUrl: string,
    private readonly scanned: DigitalLink | undefined,
  ) {
    this.bundle = peekPayload(seal.evidenceBundle) ?? {};
    this.receipt = peekPayload(seal.sealReceipt) ?? {};
  }

  requireKeys(): readonly ControlPlaneKey[] {
    if (this.keys === null) throw new Broken("the control plane's keys are not available");
    return this.keys;
  }

  assertIssuer(payload: Json, what: string): void {
    if (payload.iss !== this.proof.issuer) {
      throw new Broken(`${what} is issued by ${String(payload.iss)}, the proof by ${this.proof.issuer}`);
    }
  }

  /** The label the verifier was handed (a scanned QR, a typed link) is the label of the proof. */
  assertScannedLink(): void {
    const s = this.scanned;
    if (s === undefined) return;
    const { gtin, serial, digitalLink } = this.proof.label;
    if (s.gtin !== gtin || s.serial !== serial || s.origin !== originOf(digitalLink)) {
      throw new Broken(`the link checked is ${s.url}, the proof is about ${digitalLink}`);
    }
  }

  /** Where this label's proof is served: what the EPCIS event's certificationInfo must name. */
  proofUrl(): string {
    const { gtin, serial, digitalLink } = this.proof.label;
    return proofUrlOf(originOf(digitalLink) ?? '', gtin, serial);
  }
}
