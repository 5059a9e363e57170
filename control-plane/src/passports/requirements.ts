/**
 * What a category needs before a passport can be issued, and which products are battery-marked.
 *
 * A required credential is satisfied by a validation-result credential anchored to the passport
 * (POST /passports/{id}/validations) whose `type` names it. Validations can be anchored to a product's
 * passport before its first generation, so a battery can collect its declaration of conformity first.
 */

export interface RequiredCredential {
  /** The VC `type` value that satisfies the requirement. */
  type: string;
  /** Why it is required. */
  basis: string;
}

/**
 * Per category. Batteries need the EU declaration of conformity (Regulation (EU) 2023/1542 Art. 18 and
 * Annex XIII 1(a)); the other shipped categories (electronics, textiles, furniture) need none under ESPR
 * today.
 */
export const REQUIRED_CREDENTIALS: Readonly<Record<string, readonly RequiredCredential[]>> = {
  battery: [
    {
      type: 'EUDeclarationOfConformityCredential',
      basis: 'Regulation (EU) 2023/1542 Art. 18: EU declaration of conformity of the battery',
    },
  ],
};

export function requiredCredentials(category: string): readonly RequiredCredential[] {
  return REQUIRED_CREDENTIALS[category] ?? [];
}

/** The required credential types no anchored validation carries. */
export function missingCredentials(category: string, anchoredTypes: ReadonlySet<string>): string[] {
  return requiredCredentials(category)
    .map((r) => r.type)
    .filter((t) => !anchoredTypes.has(t));
}

/**
 * Battery-marked: the product is in the battery category, or its custom data says it contains a battery
 * that carries the Battery Regulation's marking (`customData.batteryMarked: true`, e.g. an appliance with
 * a built-in battery). publish-dpp derives passportType from it (api-v2.md: battery, otherwise generic).
 */
export function isBatteryMarked(category: string, customData: Record<string, unknown> | null): boolean {
  return category === 'battery' || customData?.['batteryMarked'] === true;
}
