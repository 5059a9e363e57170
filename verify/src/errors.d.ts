/**
 * The one error of this package: a problem with what the verifier was given (arguments, an unreadable file,
 * no QR in an image, a proof that could not be fetched), as opposed to a proof that does not verify, which is
 * a broken link in the report. The CLI exits 2 on it.
 */
export type VerifyErrorCode = 'USAGE' | 'INPUT_UNREADABLE' | 'NO_QR' | 'NOT_A_DIGITAL_LINK' | 'FETCH_FAILED' | 'NOT_A_PROOF';
export declare class VerifyError extends Error {
    readonly name = "VerifyError";
    readonly code: VerifyErrorCode;
    constructor(code: VerifyErrorCode, message: string, options?: {
        cause?: unknown;
    });
}
export declare function isVerifyError(e: unknown): e is VerifyError;
/** A short human reason from anything thrown. */
export declare function reasonOf(e: unknown): string;
