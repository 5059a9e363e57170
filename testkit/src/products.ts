import { computeGs1CheckDigit } from '@dpp/shared';

/**
 * Test and benchmark data for products: valid GTINs by number and create bodies that pass the
 * electronics schema effective now.
 */

/**
 * A valid GTIN-13 made from a number (distinct numbers give distinct GTINs), in its 14-digit form: drop
 * the leading 0 to send it as a GTIN-13.
 */
export function gtinFor(n: number): string {
  const body = `95${String(n).padStart(10, '0')}`;
  return `0${body}${computeGs1CheckDigit(body)}`;
}

/** Extensions that satisfy electronics 2.0.0. */
export const ELECTRONICS_EXTENSIONS = {
  energyEfficiencyClass: 'B',
  annualEnergyConsumptionKwh: 120,
  repairabilityScore: 7.5,
  weeeCategory: 'small_it_telecom',
} as const;

/** A valid POST /products body for electronics. */
export function productBody(n: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `Product ${n}`,
    description: `A product numbered ${n} for tests`,
    category: 'electronics',
    gtin: gtinFor(n),
    serialNumber: String(n),
    extensions: { ...ELECTRONICS_EXTENSIONS },
    ...overrides,
  };
}
