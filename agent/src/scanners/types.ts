/** A scanner that reads back a printed label: the QR it decodes and, with a reader, the RFID tag. */
export interface ScanRead {
  /** The data of the QR code, or null when the read has none (NOREAD, or other symbols only). */
  symbol: string | null;
  /**
   * Every symbol of the read with its AIM identifier (`]Q1`, `]d2`, `]C1`, ...), GS1 data with GS
   * separators as the scanner sent it. Absent where only the QR was read (a person at the console).
   */
  symbols?: { aimId: string; data: string }[];
  /** The EPC read, null for NOTAG, undefined when the scanner reported nothing about a tag. */
  epc: string | null | undefined;
}

export interface Scanner {
  readonly name: string;
  /** Triggers one read. Throws SCANNER_TIMEOUT when the scanner says nothing at all. */
  scan(options: { timeoutMs: number; signal?: AbortSignal | undefined }): Promise<ScanRead>;
  close(): Promise<void>;
}
