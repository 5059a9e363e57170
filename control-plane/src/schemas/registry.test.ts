import { describe, expect, it } from 'vitest';
import { WEEE_CATEGORIES } from './catalogue/electronics.js';
import type { FieldSchema } from './field-schema.js';
import { JSON_SCHEMA_DIALECT, validateFields } from './field-schema.js';
import { PRODUCT_COLUMNS, importTemplateColumns, renderImportTemplate } from './import-template.js';
import { isEffectiveAt, schemaRegistry } from './registry.js';

const KEYWORDS: Record<string, readonly string[]> = {
  string: ['type', 'title', 'description', 'x-unit', 'enum', 'minLength', 'maxLength', 'pattern', 'format'],
  number: [
    'type',
    'title',
    'description',
    'x-unit',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
  ],
  integer: [
    'type',
    'title',
    'description',
    'x-unit',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'exclusiveMaximum',
  ],
  boolean: ['type', 'title', 'description', 'x-unit'],
  array: ['type', 'title', 'description', 'x-unit', 'items', 'minItems', 'maxItems', 'uniqueItems'],
};

describe('the shipped category schemas', () => {
  const categories = schemaRegistry.categories();

  it('ship electronics, battery, textiles and furniture, each with a superseded and a current version', () => {
    expect(categories).toEqual(['battery', 'electronics', 'furniture', 'textiles']);
    for (const c of categories) {
      const versions = schemaRegistry.all().filter((v) => v.category === c);
      expect(versions.length, c).toBeGreaterThanOrEqual(2);
      // Windows are contiguous and never overlap; only the last is open-ended.
      for (let i = 1; i < versions.length; i++) {
        expect(versions[i - 1]!.effectiveUntil, c).toBe(versions[i]!.effectiveFrom);
      }
      expect(versions.at(-1)!.effectiveUntil).toBeNull();
      expect(versions.filter((v) => isEffectiveAt(v, Date.now()))).toHaveLength(1);
      expect(versions.filter((v) => !isEffectiveAt(v, Date.now())).length).toBeGreaterThanOrEqual(1);
    }
  });

  it('electronics has the 8 fields of the spec, weeeCategory an enum of the six values', () => {
    const current = schemaRegistry.resolve('electronics')!;
    expect(Object.keys(current.fieldSchema.properties).sort()).toEqual(
      [
        'energyEfficiencyClass',
        'annualEnergyConsumptionKwh',
        'repairabilityScore',
        'sparePartsAvailabilityYears',
        'hazardousSubstances',
        'recycledContentPercentage',
        'productLifetimeYears',
        'weeeCategory',
      ].sort(),
    );
    expect(current.fieldSchema.properties.weeeCategory).toMatchObject({
      type: 'string',
      enum: [...WEEE_CATEGORIES],
    });
    expect(WEEE_CATEGORIES).toHaveLength(6);
  });

  it('battery has about 30 fields of the Battery Regulation', () => {
    const n = Object.keys(schemaRegistry.resolve('battery')!.fieldSchema.properties).length;
    expect(n).toBeGreaterThanOrEqual(28);
    expect(n).toBeLessThanOrEqual(40);
  });

  it('every version is a well-formed field schema: known keywords, required fields defined, bounds on numbers', () => {
    for (const v of schemaRegistry.all()) {
      const s: FieldSchema = v.fieldSchema;
      expect(s.$schema).toBe(JSON_SCHEMA_DIALECT);
      expect(s.$id).toBe(v.schemaId);
      expect(s.additionalProperties).toBe(false);
      for (const r of s.required) expect(s.properties, `${v.schemaId} ${r}`).toHaveProperty(r);
      for (const [name, def] of Object.entries(s.properties)) {
        for (const k of Object.keys(def))
          expect(KEYWORDS[def.type], `${v.schemaId} ${name}.${k}`).toContain(k);
        if (def.type === 'number' || def.type === 'integer') {
          expect(def.minimum ?? def.exclusiveMinimum, `${name} lower bound`).toBeDefined();
          expect(def.maximum ?? def.exclusiveMaximum, `${name} upper bound`).toBeDefined();
        }
        // Extension columns sit next to the product columns in the CSV template: no clash.
        expect(PRODUCT_COLUMNS as readonly string[]).not.toContain(name);
      }
    }
  });

  it('selects the version effective at an instant, per jurisdiction', () => {
    expect(schemaRegistry.resolve('electronics', { at: Date.parse('2025-01-01T00:00:00Z') })!.version).toBe(
      '1.0.0',
    );
    expect(schemaRegistry.resolve('electronics', { at: Date.parse('2025-06-20T00:00:00Z') })!.version).toBe(
      '2.0.0',
    );
    expect(schemaRegistry.resolve('Electronics', { jurisdiction: 'eu' })!.version).toBe('2.0.0');
    expect(schemaRegistry.resolve('electronics', { at: Date.parse('2023-12-31T23:59:59Z') })).toBeUndefined();
    expect(schemaRegistry.resolve('electronics', { jurisdiction: 'US' })).toBeUndefined();
    expect(schemaRegistry.resolve('toys')).toBeUndefined();
  });

  it('renders the import template as the product columns followed by the extension fields', () => {
    const v = schemaRegistry.resolve('furniture')!;
    expect(importTemplateColumns(v)).toEqual([...PRODUCT_COLUMNS, ...Object.keys(v.fieldSchema.properties)]);
    expect(renderImportTemplate(v)).toBe(`${importTemplateColumns(v).join(',')}\r\n`);
  });
});

describe('validateFields', () => {
  const schema = schemaRegistry.resolve('electronics')!.fieldSchema;
  const valid = {
    energyEfficiencyClass: 'A',
    annualEnergyConsumptionKwh: 10,
    repairabilityScore: 10,
    weeeCategory: 'lamps',
  };

  it('accepts a valid value and the bounds themselves', () => {
    expect(validateFields(schema, valid)).toEqual([]);
    expect(validateFields(schema, { ...valid, repairabilityScore: 0, hazardousSubstances: [] })).toEqual([]);
  });

  it.each([
    [{ repairabilityScore: 10.5 }, 'repairabilityScore', 'maximum', 10],
    [{ repairabilityScore: -1 }, 'repairabilityScore', 'minimum', 0],
    [{ productLifetimeYears: 0 }, 'productLifetimeYears', 'exclusiveMinimum', 0],
    [{ sparePartsAvailabilityYears: 2.5 }, 'sparePartsAvailabilityYears', 'type', 'integer'],
    [{ weeeCategory: 'WEEE-4' }, 'weeeCategory', 'enum', [...WEEE_CATEGORIES]],
    [{ annualEnergyConsumptionKwh: '10' }, 'annualEnergyConsumptionKwh', 'type', 'number'],
    [{ hazardousSubstances: ['lead', 'lead'] }, 'hazardousSubstances', 'uniqueItems', true],
    [{ hazardousSubstances: [1] }, 'hazardousSubstances[0]', 'type', 'string'],
    [{ colour: 'red' }, 'colour', 'additionalProperties', false],
  ])('names the field and the bound: %j', (patch, field, keyword, limit) => {
    const problems = validateFields(schema, { ...valid, ...patch });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ field, keyword, limit });
  });

  it('reports each missing required field', () => {
    expect(validateFields(schema, {}).map((p) => [p.field, p.keyword])).toEqual(
      schema.required.map((r) => [r, 'required']),
    );
  });

  it('checks formats and patterns', () => {
    const battery = schemaRegistry.resolve('battery')!.fieldSchema;
    const problems = validateFields(battery, {
      manufacturingDate: '2025-02-30x',
      carbonFootprintStudyUrl: 'not a url',
    });
    expect(problems.filter((p) => p.keyword === 'format').map((p) => p.field)).toEqual([
      'manufacturingDate',
      'carbonFootprintStudyUrl',
    ]);
    const textiles = schemaRegistry.resolve('textiles')!.fieldSchema;
    expect(
      validateFields(textiles, { countryOfManufacture: 'pt' }).find((p) => p.keyword === 'pattern')?.field,
    ).toBe('countryOfManufacture');
  });
});
