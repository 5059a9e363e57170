import type { FieldDefinition } from '../field-schema.js';
import { defineSchema, percentage, substanceList, text, url, type CategorySchemaVersion } from '../define.js';

/**
 * Battery passport data of the EU Battery Regulation (EU) 2023/1542: Annex XIII (information in the
 * passport), Annex VI (labelling), Art. 7 (carbon footprint), Art. 8 (recycled content) and Art. 10
 * (performance and durability, with Annex IV parameters).
 */
const fields: Record<string, FieldDefinition> = {
  // General information (Annex VI part A, Annex XIII 1(a))
  batteryCategory: {
    type: 'string',
    title: 'Battery category',
    description: 'Art. 2: portable, light means of transport (LMT), SLI, industrial or electric vehicle',
    enum: ['portable', 'lmt', 'sli', 'industrial', 'ev'],
  },
  manufacturerIdentification: text('Manufacturer identification', 200, 'Name, trade name and postal address'),
  manufacturingPlace: text('Manufacturing place', 200),
  manufacturingDate: { type: 'string', title: 'Manufacturing date', format: 'date' },
  batteryMassKg: {
    type: 'number',
    title: 'Battery mass',
    exclusiveMinimum: 0,
    maximum: 10_000,
    'x-unit': 'kg',
  },
  batteryStatus: {
    type: 'string',
    title: 'Battery status',
    enum: ['original', 'repurposed', 're-used', 'remanufactured', 'waste'],
  },
  // Composition (Annex XIII 1(b))
  chemistry: {
    type: 'string',
    title: 'Battery chemistry',
    enum: [
      'LFP',
      'NMC',
      'NCA',
      'LMO',
      'LTO',
      'NiMH',
      'lead_acid',
      'sodium_ion',
      'alkaline',
      'lithium_metal',
      'other',
    ],
  },
  cathodeMaterial: text('Cathode material', 200),
  anodeMaterial: text('Anode material', 200),
  electrolyteComposition: text('Electrolyte composition', 200),
  criticalRawMaterials: {
    type: 'array',
    title: 'Critical raw materials',
    description: 'Critical raw materials present above 0.1 % w/w (Regulation (EU) 2024/1252 Annex II)',
    items: {
      type: 'string',
      enum: ['cobalt', 'lithium', 'natural_graphite', 'nickel', 'manganese', 'copper', 'aluminium', 'other'],
    },
    maxItems: 8,
    uniqueItems: true,
  },
  hazardousSubstances: substanceList(
    'Hazardous substances',
    'Substances other than mercury, cadmium or lead',
  ),
  // Performance and durability (Art. 10, Annex IV)
  ratedCapacityAh: {
    type: 'number',
    title: 'Rated capacity',
    exclusiveMinimum: 0,
    maximum: 100_000,
    'x-unit': 'Ah',
  },
  nominalVoltageV: {
    type: 'number',
    title: 'Nominal voltage',
    exclusiveMinimum: 0,
    maximum: 2_000,
    'x-unit': 'V',
  },
  minimumVoltageV: { type: 'number', title: 'Minimum voltage', minimum: 0, maximum: 2_000, 'x-unit': 'V' },
  maximumVoltageV: {
    type: 'number',
    title: 'Maximum voltage',
    exclusiveMinimum: 0,
    maximum: 2_000,
    'x-unit': 'V',
  },
  originalPowerCapabilityW: {
    type: 'number',
    title: 'Original power capability',
    exclusiveMinimum: 0,
    maximum: 10_000_000,
    'x-unit': 'W',
  },
  expectedLifetimeCycles: {
    type: 'integer',
    title: 'Expected lifetime',
    description: 'Full charge-discharge cycles until 80 % of rated capacity',
    minimum: 0,
    maximum: 100_000,
    'x-unit': 'cycles',
  },
  roundTripEnergyEfficiencyPercentage: percentage('Initial round trip energy efficiency'),
  internalResistanceMilliohm: {
    type: 'number',
    title: 'Initial internal resistance',
    minimum: 0,
    maximum: 100_000,
    'x-unit': 'mΩ',
  },
  operatingTemperatureMinC: {
    type: 'number',
    title: 'Lowest operating temperature',
    minimum: -60,
    maximum: 100,
    'x-unit': '°C',
  },
  operatingTemperatureMaxC: {
    type: 'number',
    title: 'Highest operating temperature',
    minimum: -60,
    maximum: 150,
    'x-unit': '°C',
  },
  // Carbon footprint (Art. 7)
  carbonFootprintKgCo2ePerKwh: {
    type: 'number',
    title: 'Carbon footprint',
    description: 'Life-cycle carbon footprint per kWh of total energy over the service life',
    minimum: 0,
    maximum: 10_000,
    'x-unit': 'kg CO2e/kWh',
  },
  carbonFootprintStudyUrl: url('Carbon footprint study', 'Public version of the study supporting the value'),
  // Recycled content (Art. 8)
  recycledContentCobaltPercentage: percentage('Recycled cobalt share'),
  recycledContentLithiumPercentage: percentage('Recycled lithium share'),
  recycledContentNickelPercentage: percentage('Recycled nickel share'),
  recycledContentLeadPercentage: percentage('Recycled lead share'),
  renewableContentPercentage: percentage('Renewable content share'),
  // Circularity and safety (Annex XIII 1(c), 2)
  dismantlingInformationUrl: url('Dismantling information'),
  extinguishingAgent: text('Usable extinguishing agent', 200),
  separateCollectionSymbol: {
    type: 'boolean',
    title: 'Separate collection symbol',
    description: 'Whether the crossed-out wheeled bin symbol (Annex VI part B) is on the battery',
  },
  euDeclarationOfConformityUrl: url('EU declaration of conformity'),
  dueDiligenceReportUrl: url('Supply chain due diligence report', 'Art. 52 report'),
};

const pick = (names: readonly string[]): Record<string, FieldDefinition> =>
  Object.fromEntries(names.map((n) => [n, fields[n]!]));

/** Fields of 1.0.0: the footprint study link, renewable content and due diligence report came with 2.0.0. */
const V1_FIELDS = Object.keys(fields).filter(
  (n) => !['carbonFootprintStudyUrl', 'dueDiligenceReportUrl', 'renewableContentPercentage'].includes(n),
);

const legalBasis = [
  'Regulation (EU) 2023/1542 (batteries)',
  'Regulation (EU) 2024/1252 (critical raw materials)',
];

/**
 * Battery, EU. 1.0.0 from the Regulation's date of application (18 February 2024); 2.0.0 from the
 * carbon footprint declaration obligation for EV batteries (18 August 2025), which also makes the footprint
 * required.
 */
export const BATTERY: readonly CategorySchemaVersion[] = [
  defineSchema({
    category: 'battery',
    title: 'Battery',
    jurisdiction: 'EU',
    version: '1.0.0',
    effectiveFrom: '2024-02-18T00:00:00.000Z',
    effectiveUntil: '2025-08-18T00:00:00.000Z',
    legalBasis,
    required: [
      'batteryCategory',
      'manufacturerIdentification',
      'chemistry',
      'ratedCapacityAh',
      'nominalVoltageV',
    ],
    properties: pick(V1_FIELDS),
  }),
  defineSchema({
    category: 'battery',
    title: 'Battery',
    jurisdiction: 'EU',
    version: '2.0.0',
    effectiveFrom: '2025-08-18T00:00:00.000Z',
    effectiveUntil: null,
    legalBasis,
    required: [
      'batteryCategory',
      'manufacturerIdentification',
      'manufacturingDate',
      'batteryMassKg',
      'chemistry',
      'ratedCapacityAh',
      'nominalVoltageV',
      'carbonFootprintKgCo2ePerKwh',
    ],
    properties: fields,
  }),
];
