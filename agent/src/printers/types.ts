/**
 * A printer as the job pipeline sees it: a driver on a transport. A ZPL printer on a two-way line reports
 * its status and the read-backs of the labels it prints; a PDF printer, or any printer behind CUPS or a
 * spool folder, only takes bytes.
 */
import type { PrinterStatus } from '@dpp/shared';
import type { PrinterTransport, SendReceipt } from '../transports/index.js';

export interface CompletionOptions {
  /** With RFID: the EPC the tag must read back (`^HV`). */
  expectedEpc?: string | undefined;
  /** With NFC: the URI the NFC tag's NDEF record must read back (`^HV`). */
  expectedNfcUri?: string | undefined;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /**
   * With RFID: whether a read-back is the EPC of a label sent after this one (the pipeline queues one
   * behind it). Such an answer is not this label's VOID: the printer has moved past it unanswered.
   */
  sentLater?: ((epc: string) => boolean) | undefined;
  /** With NFC: the same for a URI read back from an NFC tag (the Digital Link of a later label). */
  sentLaterLink?: ((uri: string) => boolean) | undefined;
  /** Every status seen while waiting (for MQTT and the console). */
  onStatus?: ((status: PrinterStatus) => void) | undefined;
  /**
   * The printer's own evidence says this label is out (its read-back answered as expected), before the
   * status asked after it: the scanner over the exit may read it from now on.
   */
  onOut?: (() => void) | undefined;
  /** A VOID label of this format came out (its tag would not take the write); the printer tries a fresh one. */
  onVoidOut?: (() => void) | undefined;
}

/** What the printer itself says about a label after it was sent. */
export type Completion =
  | { evidence: 'none' }
  | {
      evidence: 'printer';
      /** The status once the label was out (null if the printer did not answer then). */
      statusAfter: PrinterStatus | null;
      /** The EPC read back from the label's tag, equal to the expected one. */
      epcReadBack?: string;
      /** The URI read back from the label's NFC tag, equal to the expected one. */
      nfcReadBack?: string;
      /** VOID labels printed before the good one (failed encodes the printer retried). */
      voidLabels: number;
    };

export interface PrinterDriver {
  readonly name: string;
  readonly language: 'zpl' | 'pdf';
  readonly transport: PrinterTransport;
  /** The printer can answer (status, read-back): a ZPL printer on a serial or TCP line. */
  readonly twoWay: boolean;
  /** The printer's condition, or null when it cannot be asked. Throws PRINTER_NO_ANSWER when it is silent. */
  status(): Promise<PrinterStatus | null>;
  /**
   * Sends one label. `behind`: another format is still in the printer ahead of it (the pipeline queued it),
   * so answers waiting on the line belong to that one and must be kept.
   */
  send(payload: Buffer, name: string, options?: { behind?: boolean }): Promise<SendReceipt>;
  /** Waits for the printer's own evidence that the label is out (`none` when it cannot give any). */
  awaitCompletion(options: CompletionOptions): Promise<Completion>;
  /** Drops formats held in the printer (after a failed encode or a timeout), so they never print later. */
  cancelHeld(): Promise<void>;
  /**
   * After the agent lost track of a label it sent (a restart, a dropped line): cancels what the printer holds
   * and answers how many formats provably never started printing, so never came out (0 when it held none,
   * null when it cannot tell: a one-way line, no `~HS` count, or a format still there after the cancel).
   * `settleMs` is the longest one label takes under the head; see the ZPL driver.
   */
  cancelUnstarted(settleMs: number, signal?: AbortSignal): Promise<number | null>;
  close(): Promise<void>;
}
