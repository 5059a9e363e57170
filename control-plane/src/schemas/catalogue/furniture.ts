import type { FieldDefinition } from '../field-schema.js';
import { countryCode, defineSchema, percentage, text, type CategorySchemaVersion } from '../define.js';

const v1: Record<string, FieldDefinition> = {
  primaryMaterial: {
    type: 'string',
    title: 'Primary material',
    enum: ['solid_wood', 'engineered_wood', 'metal', 'plastic', 'glass', 'upholstered', 'stone', 'other'],
  },
  woodSpecies: text('Wood species', 200, 'Trade name or botanical name'),
  forestCertification: {
    type: 'string',
    title: 'Forest certification',
    enum: ['FSC', 'PEFC', 'none'],
  },
  weightKg: { type: 'number', title: 'Weight', exclusiveMinimum: 0, maximum: 5_000, 'x-unit': 'kg' },
  maxLoadKg: { type: 'number', title: 'Maximum load', minimum: 0, maximum: 10_000, 'x-unit': 'kg' },
  recycledContentPercentage: percentage('Recycled content'),
  countryOfManufacture: countryCode('Country of manufacture'),
};

const legalBasis = [
  'Regulation (EU) 2024/1781 (ESPR)',
  'Regulation (EU) 2023/1115 (deforestation-free products)',
];

/**
 * Furniture, EU. 2.0.0 adds formaldehyde emission class, disassembly and spare parts, and makes the
 * forest certification required (deforestation regulation due diligence from 30 December 2025).
 */
export const FURNITURE: readonly CategorySchemaVersion[] = [
  defineSchema({
    category: 'furniture',
    title: 'Furniture',
    jurisdiction: 'EU',
    version: '1.0.0',
    effectiveFrom: '2024-01-01T00:00:00.000Z',
    effectiveUntil: '2025-12-30T00:00:00.000Z',
    legalBasis,
    required: ['primaryMaterial', 'weightKg'],
    properties: v1,
  }),
  defineSchema({
    category: 'furniture',
    title: 'Furniture',
    jurisdiction: 'EU',
    version: '2.0.0',
    effectiveFrom: '2025-12-30T00:00:00.000Z',
    effectiveUntil: null,
    legalBasis,
    required: ['primaryMaterial', 'weightKg', 'forestCertification'],
    properties: {
      ...v1,
      formaldehydeEmissionClass: {
        type: 'string',
        title: 'Formaldehyde emission class',
        description: 'EN 717-1 class of wood-based panels',
        enum: ['E0', 'E1', 'E2', 'not_applicable'],
      },
      disassemblable: { type: 'boolean', title: 'Can be disassembled without damage' },
      sparePartsAvailabilityYears: {
        type: 'integer',
        title: 'Spare parts availability',
        minimum: 0,
        maximum: 30,
        'x-unit': 'a',
      },
    },
  }),
];
