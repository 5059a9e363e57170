/**
 * The JSON Schema (draft 2020-12) subset category schemas are written in, and its validator.
 *
 * A category's `fieldSchema` is an object schema whose properties are flat fields: strings (with an
 * enum, length bounds, a pattern or a `date`/`uri` format), numbers and integers (with inclusive or
 * exclusive bounds), booleans, and arrays of strings. Flat fields map one to one onto CSV columns, so
 * the import template and the JSON API share one definition. The validator implements exactly the
 * keywords below; a schema using anything else fails the registry test, not a customer request.
 */

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

interface FieldBase {
  title: string;
  description?: string;
  /** Unit of a measured value (our annotation; JSON Schema ignores unknown keywords). */
  'x-unit'?: string;
}

export interface StringField extends FieldBase {
  type: 'string';
  enum?: readonly string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: 'date' | 'uri';
}

export interface NumberField extends FieldBase {
  type: 'number' | 'integer';
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

export interface BooleanField extends FieldBase {
  type: 'boolean';
}

export interface StringArrayField extends FieldBase {
  type: 'array';
  items: { type: 'string'; enum?: readonly string[]; minLength?: number; maxLength?: number };
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
}

export type FieldDefinition = StringField | NumberField | BooleanField | StringArrayField;

/** The `fieldSchema` of a category schema version. */
export interface FieldSchema {
  $schema: typeof JSON_SCHEMA_DIALECT;
  $id: string;
  title: string;
  type: 'object';
  properties: Readonly<Record<string, FieldDefinition>>;
  required: readonly string[];
  additionalProperties: false;
}

/** One reason a value does not satisfy the schema; `field` is relative to the extensions object. */
export interface FieldProblem {
  field: string;
  message: string;
  /** The JSON Schema keyword that failed, e.g. `maximum`, `enum`, `required`. */
  keyword: string;
  /** The bound of the keyword, when it has one (e.g. 10 for `maximum: 10`). */
  limit?: unknown;
}

const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const patternCache = new Map<string, RegExp>();

function regex(pattern: string): RegExp {
  let re = patternCache.get(pattern);
  if (!re) {
    re = new RegExp(pattern, 'u');
    patternCache.set(pattern, re);
  }
  return re;
}

function isUri(value: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

function checkString(
  field: string,
  def: Omit<StringField, 'title' | 'type'>,
  v: unknown,
  out: FieldProblem[],
): void {
  if (typeof v !== 'string') {
    out.push({ field, keyword: 'type', limit: 'string', message: 'must be a string' });
    return;
  }
  if (def.enum && !def.enum.includes(v)) {
    out.push({ field, keyword: 'enum', limit: def.enum, message: `must be one of ${def.enum.join(', ')}` });
    return;
  }
  const length = [...v].length;
  if (def.minLength !== undefined && length < def.minLength) {
    out.push({
      field,
      keyword: 'minLength',
      limit: def.minLength,
      message: `must be at least ${def.minLength} characters`,
    });
  }
  if (def.maxLength !== undefined && length > def.maxLength) {
    out.push({
      field,
      keyword: 'maxLength',
      limit: def.maxLength,
      message: `must be at most ${def.maxLength} characters`,
    });
  }
  if (def.pattern !== undefined && !regex(def.pattern).test(v)) {
    out.push({ field, keyword: 'pattern', limit: def.pattern, message: `must match ${def.pattern}` });
  }
  if (def.format === 'date' && (!DATE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`)))) {
    out.push({ field, keyword: 'format', limit: 'date', message: 'must be a date YYYY-MM-DD' });
  }
  if (def.format === 'uri' && !isUri(v)) {
    out.push({ field, keyword: 'format', limit: 'uri', message: 'must be an absolute URI' });
  }
}

function checkNumber(field: string, def: NumberField, v: unknown, out: FieldProblem[]): void {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    out.push({ field, keyword: 'type', limit: def.type, message: `must be a ${def.type}` });
    return;
  }
  if (def.type === 'integer' && !Number.isInteger(v)) {
    out.push({ field, keyword: 'type', limit: 'integer', message: 'must be an integer' });
    return;
  }
  if (def.minimum !== undefined && v < def.minimum) {
    out.push({ field, keyword: 'minimum', limit: def.minimum, message: `must be at least ${def.minimum}` });
  }
  if (def.exclusiveMinimum !== undefined && v <= def.exclusiveMinimum) {
    out.push({
      field,
      keyword: 'exclusiveMinimum',
      limit: def.exclusiveMinimum,
      message: `must be greater than ${def.exclusiveMinimum}`,
    });
  }
  if (def.maximum !== undefined && v > def.maximum) {
    out.push({ field, keyword: 'maximum', limit: def.maximum, message: `must be at most ${def.maximum}` });
  }
  if (def.exclusiveMaximum !== undefined && v >= def.exclusiveMaximum) {
    out.push({
      field,
      keyword: 'exclusiveMaximum',
      limit: def.exclusiveMaximum,
      message: `must be less than ${def.exclusiveMaximum}`,
    });
  }
}

function checkArray(field: string, def: StringArrayField, v: unknown, out: FieldProblem[]): void {
  if (!Array.isArray(v)) {
    out.push({ field, keyword: 'type', limit: 'array', message: 'must be an array of strings' });
    return;
  }
  if (def.minItems !== undefined && v.length < def.minItems) {
    out.push({
      field,
      keyword: 'minItems',
      limit: def.minItems,
      message: `must have at least ${def.minItems} items`,
    });
  }
  if (def.maxItems !== undefined && v.length > def.maxItems) {
    out.push({
      field,
      keyword: 'maxItems',
      limit: def.maxItems,
      message: `must have at most ${def.maxItems} items`,
    });
  }
  if (def.uniqueItems && new Set(v).size !== v.length) {
    out.push({ field, keyword: 'uniqueItems', limit: true, message: 'must not repeat an item' });
  }
  v.forEach((item, i) => checkString(`${field}[${i}]`, def.items, item, out));
}

/**
 * Validates an extensions object against a field schema. Returns every problem found (empty when the
 * value is valid); fields are named as in the value, e.g. `repairabilityScore` or `hazardousSubstances[2]`.
 *
 * @example
 * validateFields(schema, { repairabilityScore: 12 })
 * // [{ field: 'repairabilityScore', keyword: 'maximum', limit: 10, message: 'must be at most 10' }, ...]
 */
export function validateFields(schema: FieldSchema, value: unknown): FieldProblem[] {
  const out: FieldProblem[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ field: '', keyword: 'type', limit: 'object', message: 'must be an object' }];
  }
  const record = value as Record<string, unknown>;
  for (const name of schema.required) {
    if (record[name] === undefined || record[name] === null) {
      out.push({ field: name, keyword: 'required', message: 'is required' });
    }
  }
  for (const [name, v] of Object.entries(record)) {
    const def = Object.prototype.hasOwnProperty.call(schema.properties, name)
      ? schema.properties[name]
      : undefined;
    if (!def) {
      out.push({
        field: name,
        keyword: 'additionalProperties',
        limit: false,
        message: `is not a field of ${schema.title}`,
      });
      continue;
    }
    if (v === undefined || v === null) continue; // reported above when required
    switch (def.type) {
      case 'string':
        checkString(name, def, v, out);
        break;
      case 'number':
      case 'integer':
        checkNumber(name, def, v, out);
        break;
      case 'boolean':
        if (typeof v !== 'boolean') {
          out.push({ field: name, keyword: 'type', limit: 'boolean', message: 'must be true or false' });
        }
        break;
      case 'array':
        checkArray(name, def, v, out);
        break;
    }
  }
  return out;
}

/** Drops null members (an explicit "no value") so stored extensions only hold values. */
export function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null && v !== undefined));
}
