/**
 * Passport content: named sections, each a JSON value. Generation assembles the product-derived
 * sections; EDIT and publish `updates` merge into them; each published version freezes a copy.
 */
import { buildDigitalLink } from '@dpp/shared';
import type { ProductTable } from '../store/index.js';

export type Sections = Record<string, unknown>;

/** A section name: what `updates` and `disclosure` keys may be. */
export const SECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

export interface AnchoredCredentialRef {
  types: string[];
  issuer: string;
  digest: string;
  anchoredAt: string;
}

export interface AssembleInput {
  product: ProductTable;
  publicBaseUrl: string;
  credentials: readonly AnchoredCredentialRef[];
  manufacturerDid?: string | undefined;
  lifecycleStage?: string | undefined;
}

export function digitalLinkOf(publicBaseUrl: string, gtin: string, serial: string): string {
  return buildDigitalLink(publicBaseUrl, gtin, serial);
}

/**
 * The sections generation derives from the product: `product`, `identifiers`, `attributes` (the category
 * extensions with the schema they were validated against), `credentials` (anchored validations),
 * `manufacturer` when a manufacturer DID was given, and `customData` (internal tier) when the product has
 * custom data.
 */
export function assembleSections(input: AssembleInput): Sections {
  const p = input.product;
  const sections: Sections = {
    product: {
      name: p.name,
      description: p.description,
      category: p.category,
      granularity: p.granularity,
      jurisdiction: p.jurisdiction,
      ...(input.lifecycleStage ? { lifecycleStage: input.lifecycleStage } : {}),
    },
    identifiers: {
      gtin: p.gtin,
      serialNumber: p.serial_number,
      digitalLink: digitalLinkOf(input.publicBaseUrl, p.gtin, p.serial_number),
    },
    attributes: {
      schemaId: p.schema_id,
      schemaVersion: p.schema_version,
      fields: JSON.parse(p.extensions) as Record<string, unknown>,
    },
    credentials: [...input.credentials].sort((a, b) => a.digest.localeCompare(b.digest)),
  };
  if (input.manufacturerDid) sections.manufacturer = { did: input.manufacturerDid };
  if (p.custom_data !== null) sections.customData = JSON.parse(p.custom_data) as Record<string, unknown>;
  return sections;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Merges `updates` into content by section: the fields of an update replace those of an object section
 * with the same name (a field set to null is removed); a new section is added as given.
 */
export function mergeSections(
  content: Sections,
  updates: Readonly<Record<string, Record<string, unknown>>>,
): Sections {
  const out: Sections = { ...content };
  for (const [name, update] of Object.entries(updates)) {
    const base = isObject(out[name]) ? (out[name] as Record<string, unknown>) : {};
    const merged: Record<string, unknown> = { ...base };
    for (const [field, value] of Object.entries(update)) {
      if (value === null) delete merged[field];
      else merged[field] = value;
    }
    out[name] = merged;
  }
  return out;
}
