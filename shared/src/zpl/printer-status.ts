/**
 * One typed view of the printer's condition, whichever query it came from. `~HS` knows the pause
 * state and the buffer; `~HQES` knows more error kinds but, outside the KR403, has no pause bit:
 * poll `~HS` to learn about a pause.
 */
import type { HqesStatus } from './error-status.js';
import type { HostStatus } from './host-status.js';

/** The printer's condition, parsed from `~HS` or `~HQES`. */
export interface PrinterStatus {
  source: 'HS' | 'HQES';
  /** Nothing stops printing: no error condition and not paused (as far as the source can tell). */
  ready: boolean;
  paperOut: boolean;
  ribbonOut: boolean;
  headOpen: boolean;
  paused: boolean;
  overTemperature: boolean;
  underTemperature: boolean;
  /** Label formats received but not printed yet (`~HS` only, else `null`). */
  formatsInBuffer: number | null;
  /** A format has started arriving but is not complete (`~HS` only, else `null`). */
  partialFormat: boolean | null;
  /** Every condition present, by name (`~HS` flags or `~HQES` error bit names). */
  errors: string[];
  /** `~HQES` warning names (empty for `~HS`). */
  warnings: string[];
}

/**
 * Reduces a `~HS` answer to a {@link PrinterStatus}.
 *
 * @example
 * printerStatusFromHostStatus(parseHostStatus(reply)).ready;
 */
export function printerStatusFromHostStatus(hs: HostStatus): PrinterStatus {
  const conditions: Array<[string, boolean]> = [
    ['paperOut', hs.paperOut],
    ['ribbonOut', hs.ribbonOut],
    ['headOpen', hs.headUp],
    ['paused', hs.paused],
    ['overTemperature', hs.overTemperature],
    ['underTemperature', hs.underTemperature],
    ['bufferFull', hs.bufferFull],
    ['corruptRam', hs.corruptRam],
  ];
  const errors = conditions.filter(([, on]) => on).map(([name]) => name);
  return {
    source: 'HS',
    ready: errors.length === 0,
    paperOut: hs.paperOut,
    ribbonOut: hs.ribbonOut,
    headOpen: hs.headUp,
    paused: hs.paused,
    overTemperature: hs.overTemperature,
    underTemperature: hs.underTemperature,
    formatsInBuffer: hs.formatsInBuffer,
    partialFormat: hs.partialFormat,
    errors,
    warnings: [],
  };
}

/**
 * Reduces a `~HQES` answer to a {@link PrinterStatus}.
 *
 * @example
 * printerStatusFromHqes(parseHqesStatus(reply)).headOpen;
 */
export function printerStatusFromHqes(es: HqesStatus): PrinterStatus {
  const has = (n: string): boolean => (es.errorNames as string[]).includes(n);
  return {
    source: 'HQES',
    ready: !es.errors.flag && es.errors.group1 === 0 && es.errors.group2 === 0,
    paperOut: has('mediaOut'),
    ribbonOut: has('ribbonOut'),
    headOpen: has('headOpen'),
    paused: has('paused'),
    overTemperature: has('printheadOverTemperature') || has('motorOverTemperature'),
    underTemperature: false,
    formatsInBuffer: null,
    partialFormat: null,
    errors: [...es.errorNames],
    warnings: [...es.warningNames],
  };
}
