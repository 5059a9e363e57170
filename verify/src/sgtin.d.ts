export interface Sgtin {
    gtin: string;
    serial: string;
    companyPrefixLength: number;
    filter: number;
    pureIdentityUri: string;
}
/** GS1 General Specifications §7.9.1: the check digit of the 13 digits before it. */
export declare function gtinCheckDigit(body: string): string;
/** Decodes 24 hex digits of an SGTIN-96 EPC; throws Broken when they are not one. */
export declare function decodeSgtin96(hex: string): Sgtin;
/**
 * Decodes an SGTIN-198 EPC (TDS §14.5.1.2: header 0x36, then as SGTIN-96 up to the item reference, then a
 * serial of up to 20 seven-bit characters, zero-padded to 140 bits): 50 hex digits as TDS writes it (200
 * bits) or 52 as a tag holds it (13 words); the bits past the 198th must be zero.
 */
export declare function decodeSgtin198(hex: string): Sgtin;
/** Decodes an SGTIN EPC of either scheme, by its header. */
export declare function decodeSgtin(hex: string): Sgtin;
/** The SGTIN pure-identity URI of a GTIN-14 and serial with a company prefix of `companyPrefixLength`. */
export declare function sgtinPureIdentityUri(gtin: string, serial: string, companyPrefixLength: number): string;
/** The company prefix length of an SGTIN pure-identity URI (the digits before its first dot), or null. */
export declare function companyPrefixLengthOf(uri: string): number | null;
