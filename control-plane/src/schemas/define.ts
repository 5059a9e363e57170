import { JSON_SCHEMA_DIALECT, type FieldDefinition, type FieldSchema } from './field-schema.js';

/** One version of a category schema, effective in one jurisdiction over a time window. */
export interface CategorySchemaVersion {
  category: string;
  /** Human name of the category, e.g. "Electronics". */
  title: string;
  /** Where the schema applies; `EU` for everything shipped so far. */
  jurisdiction: string;
  /** Semantic version of this schema. */
  version: string;
  /** Identifies this exact schema document (also its `fieldSchema.$id`). */
  schemaId: string;
  /** The registry entry the versions of one category and jurisdiction share. */
  schemaRegistryId: string;
  /** Inclusive start of the window in which the version is effective (ISO 8601). */
  effectiveFrom: string;
  /** Exclusive end of the window; null when open-ended. */
  effectiveUntil: string | null;
  /** Legal acts the fields are drawn from. */
  legalBasis: readonly string[];
  fieldSchema: FieldSchema;
}

export interface SchemaDefinition {
  category: string;
  title: string;
  jurisdiction: string;
  version: string;
  effectiveFrom: string;
  effectiveUntil: string | null;
  legalBasis: readonly string[];
  required: readonly string[];
  properties: Record<string, FieldDefinition>;
}

/** Builds a version's ids and its JSON Schema from a compact definition. */
export function defineSchema(def: SchemaDefinition): CategorySchemaVersion {
  const jurisdiction = def.jurisdiction.toLowerCase();
  const schemaRegistryId = `urn:dpp:schema-registry:${jurisdiction}:${def.category}`;
  const schemaId = `urn:dpp:schema:${jurisdiction}:${def.category}:${def.version}`;
  return {
    category: def.category,
    title: def.title,
    jurisdiction: def.jurisdiction,
    version: def.version,
    schemaId,
    schemaRegistryId,
    effectiveFrom: def.effectiveFrom,
    effectiveUntil: def.effectiveUntil,
    legalBasis: def.legalBasis,
    fieldSchema: {
      $schema: JSON_SCHEMA_DIALECT,
      $id: schemaId,
      title: `${def.title} extensions ${def.version} (${def.jurisdiction})`,
      type: 'object',
      properties: def.properties,
      required: def.required,
      additionalProperties: false,
    },
  };
}

/** Common field shapes, so bounds read the same across categories. */
export const percentage = (title: string, description?: string): FieldDefinition => ({
  type: 'number',
  title,
  ...(description ? { description } : {}),
  minimum: 0,
  maximum: 100,
  'x-unit': '%',
});

export const countryCode = (title: string): FieldDefinition => ({
  type: 'string',
  title,
  description: 'ISO 3166-1 alpha-2 country code',
  pattern: '^[A-Z]{2}$',
});

export const url = (title: string, description?: string): FieldDefinition => ({
  type: 'string',
  title,
  ...(description ? { description } : {}),
  format: 'uri',
  maxLength: 2048,
});

export const text = (title: string, maxLength: number, description?: string): FieldDefinition => ({
  type: 'string',
  title,
  ...(description ? { description } : {}),
  minLength: 1,
  maxLength,
});

export const substanceList = (title: string, description: string): FieldDefinition => ({
  type: 'array',
  title,
  description,
  items: { type: 'string', minLength: 1, maxLength: 200 },
  maxItems: 200,
  uniqueItems: true,
});
