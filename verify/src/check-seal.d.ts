import type { SealContext } from './seal-context.js';
/** Link 4: the version the bundle names is the one the seal lists and the receipt names. */
export declare function checkPassportVersion(ctx: SealContext): string;
/** Link 5: countersigned by the control plane; the bundle's hash; the same job, device, label and version. */
export declare function checkSealReceipt(ctx: SealContext): Promise<string>;
/** Link 6: hashes to the receipt's; commissions the label's EPC; its certificationInfo is this proof. */
export declare function checkEpcisEvent(ctx: SealContext): string;
