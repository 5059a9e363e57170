/**
 * GTIN: check digit, validation and normalisation to 14 digits.
 *
 * GS1 General Specifications §3.3.2 (GTIN formats) and §7.9.1 (standard check digit calculation).
 */
import { CodecError } from '../errors/codec-error.js';

/** The lengths a GTIN can have: GTIN-8, GTIN-12 (UPC-A), GTIN-13 (EAN-13) and GTIN-14. */
export const GTIN_LENGTHS: readonly number[] = [8, 12, 13, 14];

const DIGITS = /^[0-9]+$/;

/**
 * The GS1 mod-10 check digit of a digit string that does not yet carry one.
 *
 * GS1 General Specifications §7.9.1: weights 3 and 1 alternate starting with 3 on the digit at the right,
 * the check digit is the amount that brings the weighted sum up to the next multiple of ten. The same
 * algorithm serves GTIN, GLN and SSCC, so any length from 1 to 17 digits is accepted.
 *
 * @example
 * computeGs1CheckDigit('9501093'); // 9, so 95010939 is a valid GTIN-8
 */
export function computeGs1CheckDigit(digitsWithoutCheckDigit: string): number {
  const body = digitsWithoutCheckDigit;
  if (!DIGITS.test(body) || body.length > 17) {
    throw new CodecError(
      'INVALID_GTIN',
      `check digit input must be 1 to 17 digits, got ${JSON.stringify(body)}`,
    );
  }
  let sum = 0;
  for (let i = 0; i < body.length; i += 1) {
    // Position counted from the right, 0-based: even positions weigh 3, odd ones 1.
    const weight = (body.length - 1 - i) % 2 === 0 ? 3 : 1;
    sum += Number(body[i]) * weight;
  }
  return (10 - (sum % 10)) % 10;
}

/** The reason a GTIN is invalid, or undefined when it is valid. */
function gtinProblem(gtin: string): string | undefined {
  if (!DIGITS.test(gtin)) return 'a GTIN contains digits only';
  if (!GTIN_LENGTHS.includes(gtin.length)) return 'a GTIN has 8, 12, 13 or 14 digits';
  const expected = computeGs1CheckDigit(gtin.slice(0, -1));
  if (Number(gtin.slice(-1)) !== expected) return `bad check digit, expected ${expected}`;
  return undefined;
}

/**
 * True for a GTIN-8, GTIN-12, GTIN-13 or GTIN-14 made of digits with a correct check digit.
 *
 * @example
 * isValidGtin('4006381333931'); // true
 * isValidGtin('4006381333932'); // false (check digit)
 */
export function isValidGtin(gtin: string): boolean {
  return typeof gtin === 'string' && gtinProblem(gtin) === undefined;
}

/**
 * Validates a GTIN and returns its 14-digit form (left-padded with zeros, GS1 General Specifications
 * §3.3.2: a GTIN-8/12/13 is carried in a 14-digit field right-justified with leading zeros).
 * Throws `CodecError` `INVALID_GTIN` otherwise.
 *
 * @example
 * normalizeGtin('95010939'); // '00000095010939'
 */
export function normalizeGtin(gtin: string): string {
  const problem = typeof gtin === 'string' ? gtinProblem(gtin) : 'a GTIN is a string';
  if (problem !== undefined) {
    throw new CodecError('INVALID_GTIN', `invalid GTIN ${JSON.stringify(gtin)}: ${problem}`, {
      details: { gtin },
    });
  }
  return gtin.padStart(14, '0');
}
