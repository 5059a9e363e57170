export interface DigitalLink {
    /** The link as given. */
    url: string;
    origin: string;
    /** GTIN-14 (shorter GTINs padded with zeros, GS1 DL §4.5). */
    gtin: string;
    serial: string;
}
export declare function parseDigitalLink(text: string): DigitalLink;
/** Where the control plane serves a label's proof (label-proof.md, "Where to get it"). */
export declare function proofUrlOf(origin: string, gtin: string, serial: string): string;
/** Two URLs compared after WHATWG URL normalisation (case of scheme and host, default port, dot segments). */
export declare function sameUrl(a: string, b: string): boolean;
/** The origin of a URL, or null when it is not one. */
export declare function originOf(url: string): string | null;
