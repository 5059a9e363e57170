import type { FieldDefinition } from '../field-schema.js';
import { defineSchema, percentage, substanceList, type CategorySchemaVersion } from '../define.js';

/**
 * WEEE categories of Directive 2012/19/EU Annex III, as the enum the spec names (api-v2.md, Extensions of
 * the electronics category: "an enum, not a WEEE number").
 */
export const WEEE_CATEGORIES = [
  'temperature_exchange',
  'screens_monitors',
  'lamps',
  'large_equipment',
  'small_equipment',
  'small_it_telecom',
] as const;

/** Classes of the rescaled EU energy label, Regulation (EU) 2017/1369 Art. 2(15). */
const ENERGY_CLASSES = ['A', 'B', 'C', 'D', 'E', 'F', 'G'] as const;

const common: Record<string, FieldDefinition> = {
  energyEfficiencyClass: {
    type: 'string',
    title: 'Energy efficiency class',
    description: 'Class on the EU energy label (Regulation (EU) 2017/1369)',
    enum: ENERGY_CLASSES,
  },
  annualEnergyConsumptionKwh: {
    type: 'number',
    title: 'Annual energy consumption',
    minimum: 0,
    maximum: 100_000,
    'x-unit': 'kWh/annum',
  },
  sparePartsAvailabilityYears: {
    type: 'integer',
    title: 'Spare parts availability',
    description: 'Years spare parts stay available after the last unit is placed on the market',
    minimum: 0,
    maximum: 30,
    'x-unit': 'a',
  },
  hazardousSubstances: substanceList(
    'Hazardous substances',
    'Substances restricted by RoHS (Directive 2011/65/EU) or SVHCs above 0.1 % w/w, by name or CAS number',
  ),
  recycledContentPercentage: percentage(
    'Recycled content',
    'Share of post-consumer recycled material by mass',
  ),
  productLifetimeYears: {
    type: 'number',
    title: 'Expected product lifetime',
    exclusiveMinimum: 0,
    maximum: 50,
    'x-unit': 'a',
  },
  weeeCategory: {
    type: 'string',
    title: 'WEEE category',
    description: 'Directive 2012/19/EU Annex III category',
    enum: WEEE_CATEGORIES,
  },
};

const legalBasis = [
  'Regulation (EU) 2024/1781 (ESPR)',
  'Regulation (EU) 2017/1369 (energy labelling)',
  'Directive 2012/19/EU (WEEE)',
  'Directive 2011/65/EU (RoHS)',
];

/**
 * Electronics, EU. 1.0.0 had seven fields; 2.0.0 adds the repairability score when the ecodesign
 * requirements for smartphones and tablets (Regulation (EU) 2023/1670) started to apply on 20 June 2025.
 */
export const ELECTRONICS: readonly CategorySchemaVersion[] = [
  defineSchema({
    category: 'electronics',
    title: 'Electronics',
    jurisdiction: 'EU',
    version: '1.0.0',
    effectiveFrom: '2024-01-01T00:00:00.000Z',
    effectiveUntil: '2025-06-20T00:00:00.000Z',
    legalBasis,
    required: ['energyEfficiencyClass', 'weeeCategory'],
    properties: common,
  }),
  defineSchema({
    category: 'electronics',
    title: 'Electronics',
    jurisdiction: 'EU',
    version: '2.0.0',
    effectiveFrom: '2025-06-20T00:00:00.000Z',
    effectiveUntil: null,
    legalBasis: [...legalBasis, 'Regulation (EU) 2023/1670 (smartphones and tablets)'],
    required: ['energyEfficiencyClass', 'annualEnergyConsumptionKwh', 'repairabilityScore', 'weeeCategory'],
    properties: {
      energyEfficiencyClass: common.energyEfficiencyClass!,
      annualEnergyConsumptionKwh: common.annualEnergyConsumptionKwh!,
      repairabilityScore: {
        type: 'number',
        title: 'Repairability score',
        description: 'Repairability index from 0 (not repairable) to 10',
        minimum: 0,
        maximum: 10,
      },
      sparePartsAvailabilityYears: common.sparePartsAvailabilityYears!,
      hazardousSubstances: common.hazardousSubstances!,
      recycledContentPercentage: common.recycledContentPercentage!,
      productLifetimeYears: common.productLifetimeYears!,
      weeeCategory: common.weeeCategory!,
    },
  }),
];
