import type { LabelFault } from '../faults/faults.js';

/** One physical label that came out of the printer. */
export interface PrintedLabel {
  /** Physical label number, 1-based (a format whose tag fails uses one label per try). */
  index: number;
  /** The label format it was printed for, numbered by arrival of its `^XA`. */
  formatIndex: number;
  /** Which try of the format this label was (1 unless RFID encoding failed before). */
  attempt: number;
  /** The format as received. */
  zpl: string;
  /** What the print head printed (see `render/printable-zpl.ts`). */
  printedZpl: string;
  png: Buffer;
  pngPath: string;
  /** VOID was printed over it: its tag could not be encoded. */
  void: boolean;
  /** The EPC the format asked to write, or null. */
  epcRequested: string | null;
  /** The EPC the label's tag holds after encoding (all zeros for a blank tag), or null without RFID. */
  epc: string | null;
  /**
   * The URI of the NDEF URI record the label's NFC tag holds after encoding; null without an NFC encoder, or
   * when the tag holds no URI record (a blank tag holds an empty NDEF message).
   */
  nfcUri: string | null;
  /** The text fields as printed, in order (decoded: `^FH` escapes, UTF-8 under `^CI28`). */
  texts: string[];
  /** The data of the first QR code as printed (after a wrong-content fault), or null. */
  content: string | null;
  /** Label faults that hit it. */
  faults: LabelFault[];
  printedAt: Date;
}

export type PrinterEvents = {
  /** A format is complete (`^XZ`) and waits in the buffer. */
  formatReceived: [info: { formatIndex: number }];
  /** A format was dropped: line drop mid-job, `~JA`, or `^RS` error handling N. */
  formatDropped: [info: { formatIndex: number; reason: string }];
  labelPrinted: [label: PrintedLabel];
  /** Every try to encode a format's tags failed and the `^RS` error handling (P or E) holds it. */
  rfidError: [info: { formatIndex: number; onError: 'N' | 'P' | 'E' }];
};
