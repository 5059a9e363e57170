/**
 * AI (21) serial numbers.
 *
 * GS1 General Specifications §3.5.2 (AI 21: up to 20 characters, format X..20) and §7.11 Figure 7.11-1
 * (GS1 AI encodable character set 82: `!"%&'()*+,-./0-9:;<=>?A-Z_a-z`; no space, `#`, `$`, `@`, `~` ...).
 */
import { CodecError } from '../errors/codec-error.js';

/** Maximum length of an AI (21) serial number. */
export const GS1_SERIAL_MAX_LENGTH = 20;

/** One or more characters of GS1 AI encodable character set 82. */
const CHARSET_82 = /^[!"%&'()*+,\-./0-9:;<=>?A-Z_a-z]+$/;

function serialProblem(serial: string): string | undefined {
  if (serial.length === 0) return 'a serial has at least 1 character';
  if (serial.length > GS1_SERIAL_MAX_LENGTH)
    return `a serial has at most ${GS1_SERIAL_MAX_LENGTH} characters`;
  if (!CHARSET_82.test(serial)) return 'a serial uses GS1 character set 82 only';
  return undefined;
}

/**
 * True for a valid AI (21) serial: 1 to 20 characters of GS1 character set 82.
 *
 * @example
 * isValidGs1Serial('32a/b'); // true
 * isValidGs1Serial('has space'); // false
 */
export function isValidGs1Serial(serial: string): boolean {
  return typeof serial === 'string' && serialProblem(serial) === undefined;
}

/**
 * Returns the serial unchanged when it is a valid AI (21) serial, else throws `CodecError` `INVALID_SERIAL`.
 *
 * @example
 * assertGs1Serial('ABC-123'); // 'ABC-123'
 */
export function assertGs1Serial(serial: string): string {
  const problem = typeof serial === 'string' ? serialProblem(serial) : 'a serial is a string';
  if (problem !== undefined) {
    throw new CodecError('INVALID_SERIAL', `invalid serial ${JSON.stringify(serial)}: ${problem}`, {
      details: { serial },
    });
  }
  return serial;
}
