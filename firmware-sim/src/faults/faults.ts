/**
 * Fault injection, set through this control API or scripted per label.
 *
 * Printer conditions last until cleared, like the real thing: `paperOut`, `ribbonOut`, `headOpen`,
 * `paused`. Label faults hit one label format when scripted with {@link FaultController.scriptLabel}
 * (formats are numbered 1, 2, ... in the order their `^XA` arrives since the printer started), or
 * every format while set with {@link FaultController.set}:
 * - `smudged`: the printed label is smeared over its QR code, so the scanner reports `NOREAD`;
 * - `voidTag`: every try to write the tag fails; each try prints VOID and uses a label, then the
 *   `^RS` error handling applies;
 * - `voidNfcTag`: the same for the NFC tag (the HF encoder's writes fail, the UHF encoder's do not);
 * - `wrongContent`: the printed QR code encodes something else;
 * - `disconnect`: the line drops after the first field of the format has arrived.
 * - `dropAfterPrint`: the label comes out, then the line drops before the printer answers anything about it
 *   (a cable pulled, or the host's end dying, right after a print).
 * The slow line is {@link FaultController.setBaudRate}: real pacing of both directions.
 */
import { TypedEvents } from '@dpp/shared';
import { SimError } from '../errors.js';

export const PRINTER_CONDITIONS = ['paperOut', 'ribbonOut', 'headOpen', 'paused'] as const;
export const LABEL_FAULTS = [
  'smudged',
  'voidTag',
  'voidNfcTag',
  'wrongContent',
  'disconnect',
  'dropAfterPrint',
] as const;

export type PrinterCondition = (typeof PRINTER_CONDITIONS)[number];
export type LabelFault = (typeof LABEL_FAULTS)[number];
export type FaultName = PrinterCondition | LabelFault;

export const FAULT_NAMES: readonly FaultName[] = [...PRINTER_CONDITIONS, ...LABEL_FAULTS];

export function isFaultName(name: string): name is FaultName {
  return (FAULT_NAMES as readonly string[]).includes(name);
}

export function isLabelFault(name: string): name is LabelFault {
  return (LABEL_FAULTS as readonly string[]).includes(name);
}

export type FaultEvents = {
  changed: [name: FaultName | 'baudRate', on: boolean];
};

/** The fault-control API of a running device. */
export interface FaultControl {
  /** Sets or clears a condition or a standing label fault. */
  set(name: FaultName, on: boolean): void;
  get(name: FaultName): boolean;
  /** Names of everything set now. */
  active(): FaultName[];
  /** Scripts a fault for label format `n` (1-based, in order of arrival). */
  scriptLabel(n: number, fault: LabelFault): void;
  /** Scripts a fault for the next label format to arrive. */
  scriptNext(fault: LabelFault): void;
  /** Clears every condition, standing fault and script; the baud rate stays. */
  clear(): void;
  /** Paces the line at `baud` (9600 to 115200 are typical); `null` turns pacing off. */
  setBaudRate(baud: number | null): void;
  readonly baudRate: number | null;
}

export class FaultController implements FaultControl {
  readonly events = new TypedEvents<FaultEvents>();
  private readonly on = new Set<FaultName>();
  private readonly scripts = new Map<number, Set<LabelFault>>();
  private baud: number | null;
  private formatsStarted = 0;

  constructor(baudRate: number | null = null) {
    this.baud = validBaud(baudRate);
  }

  set(name: FaultName, on: boolean): void {
    if (!isFaultName(name)) throw new SimError('INVALID_OPTION', `unknown fault ${String(name)}`);
    if (this.on.has(name) === on) return;
    if (on) this.on.add(name);
    else this.on.delete(name);
    this.events.emit('changed', name, on);
  }

  get(name: FaultName): boolean {
    return this.on.has(name);
  }

  active(): FaultName[] {
    return FAULT_NAMES.filter((n) => this.on.has(n));
  }

  scriptLabel(n: number, fault: LabelFault): void {
    if (!Number.isInteger(n) || n < 1) throw new SimError('INVALID_OPTION', 'label number must be 1 or more');
    if (!isLabelFault(fault)) throw new SimError('INVALID_OPTION', `unknown label fault ${String(fault)}`);
    const set = this.scripts.get(n) ?? new Set<LabelFault>();
    set.add(fault);
    this.scripts.set(n, set);
  }

  scriptNext(fault: LabelFault): void {
    this.scriptLabel(this.formatsStarted + 1, fault);
  }

  clear(): void {
    for (const name of this.active()) this.set(name, false);
    this.scripts.clear();
  }

  setBaudRate(baud: number | null): void {
    this.baud = validBaud(baud);
    this.events.emit('changed', 'baudRate', baud !== null);
  }

  get baudRate(): number | null {
    return this.baud;
  }

  /**
   * Called by the printer when a format starts (`^XA`): numbers it and returns the label faults
   * that hit it (its script, consumed, plus the standing ones).
   */
  startFormat(): { formatIndex: number; faults: Set<LabelFault> } {
    const formatIndex = ++this.formatsStarted;
    const faults = new Set<LabelFault>(this.scripts.get(formatIndex) ?? []);
    this.scripts.delete(formatIndex);
    for (const f of LABEL_FAULTS) if (this.on.has(f)) faults.add(f);
    return { formatIndex, faults };
  }
}

function validBaud(baud: number | null): number | null {
  if (baud === null) return null;
  if (!Number.isInteger(baud) || baud < 300 || baud > 921600) {
    throw new SimError('INVALID_OPTION', 'baud rate must be an integer from 300 to 921600', {
      details: { baud },
    });
  }
  return baud;
}
