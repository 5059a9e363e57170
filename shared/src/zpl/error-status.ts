/**
 * `~HQES` host query, error status (ZPL II Programming Guide, ~HQ). The printer answers one block:
 *
 * ```
 * <STX><CR><LF>
 *   PRINTER STATUS<CR><LF>
 *    ERRORS:         1 00000000 00000005<CR><LF>
 *    WARNINGS:       0 00000000 00000000<CR><LF>
 * <ETX><CR><LF>
 * ```
 *
 * Each line is a flag (1 = at least one present), then group 2 (nibbles 16-9) and group 1
 * (nibbles 8-1) as eight hex digits each. The bit values below are those of the guide's "Error
 * Flags" and "Warning Flags" tables; bits marked KR403 only apply to that kiosk printer. The exact
 * amount of white space in the lines is not specified there, so the parser accepts any.
 */
import { DeviceProtocolError } from './errors.js';
import { CRLF, ETX, STX } from './control-chars.js';

/** Group 1 error bits of `~HQES`. */
export const HQES_ERRORS = {
  mediaOut: 0x00000001,
  ribbonOut: 0x00000002,
  headOpen: 0x00000004,
  cutterFault: 0x00000008,
  printheadOverTemperature: 0x00000010,
  motorOverTemperature: 0x00000020,
  badPrintheadElement: 0x00000040,
  printheadDetectionError: 0x00000080,
  invalidFirmwareConfig: 0x00000100,
  printheadThermistorOpen: 0x00000200,
  /** KR403 only. */
  paperJamDuringRetract: 0x00001000,
  /** KR403 only. */
  presenterNotRunning: 0x00002000,
  /** KR403 only. */
  paperFeedError: 0x00004000,
  /** KR403 only. */
  clearPaperPathFailed: 0x00008000,
  /**
   * KR403 only. Nibble 5 value 1: the last rows of the guide's table were not legible in the copy
   * checked here, so this and the next bit come from two independent open-source decoders that agree.
   */
  paused: 0x00010000,
  /** KR403 only (see `paused`). */
  retractFunctionTimedOut: 0x00020000,
  /** KR403 only. */
  blackMarkCalibrateError: 0x00040000,
  /** KR403 only. */
  blackMarkNotFound: 0x00080000,
} as const;

/** Group 1 warning bits of `~HQES`. */
export const HQES_WARNINGS = {
  needToCalibrateMedia: 0x00000001,
  cleanPrinthead: 0x00000002,
  replacePrinthead: 0x00000004,
  /** KR403 only. */
  paperNearEnd: 0x00000008,
} as const;

/** Name of an error bit. */
export type HqesErrorName = keyof typeof HQES_ERRORS;
/** Name of a warning bit. */
export type HqesWarningName = keyof typeof HQES_WARNINGS;

/** One `ERRORS:` or `WARNINGS:` line. */
export interface HqesFlagGroup {
  flag: boolean;
  group2: number;
  group1: number;
}

/** The parsed `~HQES` block. */
export interface HqesStatus {
  errors: HqesFlagGroup;
  warnings: HqesFlagGroup;
  /** Names of the error bits set in group 1. */
  errorNames: HqesErrorName[];
  /** Names of the warning bits set in group 1. */
  warningNames: HqesWarningName[];
}

function names<T extends Record<string, number>>(table: T, bits: number): (keyof T & string)[] {
  return (Object.keys(table) as (keyof T & string)[]).filter((k) => (bits & (table[k] as number)) !== 0);
}

/**
 * Builds an {@link HqesStatus} from the names of the conditions present.
 *
 * @example
 * hqesStatusOf(['mediaOut', 'headOpen']).errors.group1; // 0x00000005
 */
export function hqesStatusOf(
  errors: readonly HqesErrorName[],
  warnings: readonly HqesWarningName[] = [],
): HqesStatus {
  const e = errors.reduce((acc, n) => acc | HQES_ERRORS[n], 0);
  const w = warnings.reduce((acc, n) => acc | HQES_WARNINGS[n], 0);
  return {
    errors: { flag: e !== 0, group2: 0, group1: e },
    warnings: { flag: w !== 0, group2: 0, group1: w },
    errorNames: names(HQES_ERRORS, e),
    warningNames: names(HQES_WARNINGS, w),
  };
}

const hex8 = (n: number): string => (n >>> 0).toString(16).toUpperCase().padStart(8, '0');

function line(label: string, g: HqesFlagGroup): string {
  return `   ${`${label}:`.padEnd(16)}${g.flag ? 1 : 0} ${hex8(g.group2)} ${hex8(g.group1)}`;
}

/**
 * Formats the `~HQES` answer block.
 *
 * @example
 * formatHqesStatus(hqesStatusOf(['mediaOut', 'headOpen']));
 * // '\x02\r\n  PRINTER STATUS\r\n   ERRORS:         1 00000000 00000005\r\n ...\x03\r\n'
 */
export function formatHqesStatus(s: HqesStatus): string {
  return (
    [STX, '  PRINTER STATUS', line('ERRORS', s.errors), line('WARNINGS', s.warnings), ETX].join(CRLF) + CRLF
  );
}

const LINE = /^\s*(ERRORS|WARNINGS)\s*:\s*([01])\s+([0-9A-Fa-f]{8})\s+([0-9A-Fa-f]{8})\s*$/;

/**
 * Parses a `~HQES` answer (with or without its STX/ETX framing). Throws `MALFORMED_ERROR_STATUS`
 * when the `PRINTER STATUS` heading or one of the two lines is missing.
 *
 * @example
 * parseHqesStatus(reply).errorNames; // ['mediaOut', 'headOpen'] for group 1 = 00000005
 */
export function parseHqesStatus(reply: string): HqesStatus {
  const lines = reply
    .replaceAll(STX, '')
    .replaceAll(ETX, '')
    .split(/\r?\n|\r/);
  if (!lines.some((l) => l.trim().toUpperCase() === 'PRINTER STATUS')) {
    throw new DeviceProtocolError('MALFORMED_ERROR_STATUS', '~HQES answer has no PRINTER STATUS heading', {
      details: { reply },
    });
  }
  const groups: Partial<Record<'ERRORS' | 'WARNINGS', HqesFlagGroup>> = {};
  for (const l of lines) {
    const m = LINE.exec(l.toUpperCase());
    if (m)
      groups[m[1] as 'ERRORS' | 'WARNINGS'] = {
        flag: m[2] === '1',
        group2: parseInt(m[3] ?? '', 16),
        group1: parseInt(m[4] ?? '', 16),
      };
  }
  const { ERRORS: errors, WARNINGS: warnings } = groups;
  if (!errors || !warnings) {
    throw new DeviceProtocolError(
      'MALFORMED_ERROR_STATUS',
      '~HQES answer needs an ERRORS and a WARNINGS line',
      {
        details: { reply },
      },
    );
  }
  return {
    errors,
    warnings,
    errorNames: names(HQES_ERRORS, errors.group1),
    warningNames: names(HQES_WARNINGS, warnings.group1),
  };
}
