/**
 * Links 2 and 3: the device statement (the control plane says which keys the device had, when) and the
 * evidence bundle (the device says what it rendered, sent, read back and scanned).
 */
import { type Ed25519Jwk } from './jws.js';
import type { SealContext } from './seal-context.js';
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
/** Link 2: signed by the control plane inside its key's window; names the bundle's device. */
export declare function checkDeviceStatement(ctx: SealContext): Promise<string>;
/**
 * Link 3: signed by the device key its kid names, inside that key's window and while the device was enrolled;
 * names the label's Digital Link in the render and the scan and its EPC in the render and the reads; the
 * bytes sent are the bytes rendered.
 */
export declare function checkEvidenceBundle(ctx: SealContext): Promise<string>;
export {};
