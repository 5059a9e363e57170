import type { FieldDefinition } from '../field-schema.js';
import {
  countryCode,
  defineSchema,
  percentage,
  substanceList,
  text,
  type CategorySchemaVersion,
} from '../define.js';

/** Fibre names of Regulation (EU) 1007/2011 Annex I that cover most apparel (`other` for the rest). */
const FIBRES = [
  'cotton',
  'polyester',
  'wool',
  'viscose',
  'polyamide',
  'linen',
  'silk',
  'acrylic',
  'elastane',
  'lyocell',
  'other',
] as const;

const v1: Record<string, FieldDefinition> = {
  fibreComposition: text('Fibre composition', 500, 'As on the label, e.g. "95 % cotton, 5 % elastane"'),
  primaryFibre: { type: 'string', title: 'Primary fibre', enum: FIBRES },
  primaryFibrePercentage: percentage('Share of the primary fibre'),
  recycledFibrePercentage: percentage('Recycled fibre share', 'Share of recycled fibres by mass'),
  countryOfManufacture: countryCode('Country of manufacture'),
  careInstructions: text('Care instructions', 500, 'ISO 3758 care symbols in words'),
  durabilityWashCycles: {
    type: 'integer',
    title: 'Durability',
    description: 'Domestic wash cycles the garment keeps its properties through',
    minimum: 0,
    maximum: 1_000,
    'x-unit': 'cycles',
  },
  repairServiceAvailable: { type: 'boolean', title: 'Repair service available' },
};

const legalBasis = ['Regulation (EU) 1007/2011 (textile fibre names)', 'Regulation (EU) 2024/1781 (ESPR)'];

/**
 * Textiles, EU. 2.0.0 (from 2026) adds microplastic release and substances of concern, which the ESPR
 * working plan puts first for textiles.
 */
export const TEXTILES: readonly CategorySchemaVersion[] = [
  defineSchema({
    category: 'textiles',
    title: 'Textiles and apparel',
    jurisdiction: 'EU',
    version: '1.0.0',
    effectiveFrom: '2024-07-18T00:00:00.000Z',
    effectiveUntil: '2026-01-01T00:00:00.000Z',
    legalBasis,
    required: ['fibreComposition', 'countryOfManufacture'],
    properties: v1,
  }),
  defineSchema({
    category: 'textiles',
    title: 'Textiles and apparel',
    jurisdiction: 'EU',
    version: '2.0.0',
    effectiveFrom: '2026-01-01T00:00:00.000Z',
    effectiveUntil: null,
    legalBasis,
    required: ['fibreComposition', 'primaryFibre', 'countryOfManufacture'],
    properties: {
      ...v1,
      microplasticReleaseMgPerKg: {
        type: 'number',
        title: 'Microplastic release',
        description: 'Fibre fragments released per kg of textile in the first wash',
        minimum: 0,
        maximum: 100_000,
        'x-unit': 'mg/kg',
      },
      substancesOfConcern: substanceList('Substances of concern', 'ESPR Art. 2(28), by name or CAS number'),
    },
  }),
];
