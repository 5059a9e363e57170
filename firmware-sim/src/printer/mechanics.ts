/**
 * The printer's mechanical model: how long one label takes to come out. A thermal RFID printer/encoder
 * feeds the label's inlay over its antenna, writes the EPC and reads it back to verify it, then prints the
 * label while the media moves at the print speed, one label at a time:
 *
 *   label time = RFID encode + RFID read-back (when the format writes a tag) + label length / print speed
 *   mechanical limit (labels/s) = 1 / label time
 *
 * The defaults are a production setting of a ZT411 RFID class printer (see the README's "Mechanical model"
 * for the sources and how far to trust them): 6 inches per second on 2-inch labels (333 ms), 100 ms to
 * write the 96-bit EPC and 40 ms to read it back: 473 ms, 2.11 labels/s.
 */
export interface PrinterMechanics {
  /** Media speed while printing, inches per second (ZPL `^PR`; a ZT411 at 203 dpi goes up to 14). */
  printSpeedIps: number;
  /** Label pitch the media advances per label (label plus gap), inches. */
  labelLengthIn: number;
  /** Time to write the EPC into the inlay (`^RFW`), per try. */
  rfidEncodeMs: number;
  /** Time to read the tag back after the write (the verify behind `^HV`), per try. */
  rfidReadBackMs: number;
}

export const RFID_PRINTER_MECHANICS: Readonly<PrinterMechanics> = Object.freeze({
  printSpeedIps: 6,
  labelLengthIn: 2,
  rfidEncodeMs: 100,
  rfidReadBackMs: 40,
});

/**
 * The fast end of RFID printing, eight labels a second (125 ms a label): 12 ips on 1-inch labels (83 ms) with an
 * inlay that takes 30 ms to write and 12 ms to read back. For drills and benchmarks of an agent that must keep
 * up with the fastest printers, not a model of one.
 */
export const FAST_RFID_PRINTER_MECHANICS: Readonly<PrinterMechanics> = Object.freeze({
  printSpeedIps: 12,
  labelLengthIn: 1,
  rfidEncodeMs: 30,
  rfidReadBackMs: 12,
});

/** Time the media takes to carry one label under the head. */
export function printMs(m: PrinterMechanics): number {
  return (1000 * m.labelLengthIn) / m.printSpeedIps;
}

/** Time the encoder takes for one tag: write, then read back. */
export function encodeMs(m: PrinterMechanics): number {
  return m.rfidEncodeMs + m.rfidReadBackMs;
}

/** One label from start to out: encode and read back (with a tag), then print. */
export function labelMs(m: PrinterMechanics, rfid = true): number {
  return printMs(m) + (rfid ? encodeMs(m) : 0);
}

/** The most labels per second the printer can put out: one at a time, nothing waiting between them. */
export function mechanicalLimit(m: PrinterMechanics, rfid = true): number {
  return 1000 / labelMs(m, rfid);
}

/** Checks a model given from outside (options, CLI flags); throws a plain message on a bad value. */
export function checkMechanics(m: PrinterMechanics): PrinterMechanics {
  const positive = (name: string, v: number) => {
    if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  };
  const nonNegative = (name: string, v: number) => {
    if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be zero or more`);
  };
  positive('printSpeedIps', m.printSpeedIps);
  positive('labelLengthIn', m.labelLengthIn);
  nonNegative('rfidEncodeMs', m.rfidEncodeMs);
  nonNegative('rfidReadBackMs', m.rfidReadBackMs);
  return m;
}
