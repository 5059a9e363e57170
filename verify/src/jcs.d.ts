/** The RFC 8785 canonical JSON of a parsed JSON value. */
export declare function canonicalJson(value: unknown): string;
/** Lower-case hex SHA-256 of a string (UTF-8) or bytes. */
export declare function sha256Hex(data: string | Uint8Array): string;
