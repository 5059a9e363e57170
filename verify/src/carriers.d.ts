/**
 * The carriers of a label as its evidence names them (render manifest `carriers`, scan result `carriers`,
 * attestation `nfcReadBack`): each must hold what the label's GTIN, serial and Digital Link say, and each
 * was verified after printing (a symbol scanned, an NFC tag read back; the EPC is checked on its own).
 * A bundle from before carriers were listed names only its QR code and SGTIN-96, and has none of this.
 */
import { type Json } from './shape.js';
export interface LabelKey {
    gtin: string;
    serial: string;
    digitalLink: string;
}
interface Carrier {
    type: string;
    /** What the carrier holds: the data of a symbol, the EPC of a tag, the URI of an NFC record. */
    content: string;
    /** Which DataMatrix form, when it is one. */
    form?: string;
    /** The EPC scheme of an RFID tag. */
    scheme?: string;
}
/** The carriers a manifest or scan lists, or undefined when it lists none (evidence from before the list). */
export declare function readCarriers(o: Json, what: string): Carrier[] | undefined;
/** The EPC the render's carriers name for the RFID tag, if any. */
export declare function renderedRfidEpc(render: Json): string | undefined;
/**
 * Checks every carrier the render lists against the label and against what was read after printing; returns
 * how they read ("QR code, DataMatrix (Digital Link), RFID SGTIN-96"), or undefined for a bundle without the
 * list.
 */
export declare function checkCarriers(label: LabelKey, render: Json, attestation: Json, scan: Json): string | undefined;
export {};
