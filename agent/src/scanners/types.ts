/** A scanner that reads back a printed label: the QR it decodes and, with a reader, the RFID tag. */
export interface ScanRead {
  /** The decoded symbol data, or null for NOREAD. */
  symbol: string | null;
  /** The EPC read, null for NOTAG, undefined when the scanner reported nothing about a tag. */
  epc: string | null | undefined;
}

export interface Scanner {
  readonly name: string;
  /** Triggers one read. Throws SCANNER_TIMEOUT when the scanner says nothing at all. */
  scan(options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<ScanRead>;
  close(): Promise<void>;
}
