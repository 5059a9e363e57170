import type { CategorySchemaVersion } from './define.js';

/**
 * Product columns of every import (the create request's fields, api-v2.md Resources: Product create
 * request); the category's extension fields follow them, one column each, in schema order.
 */
export const PRODUCT_COLUMNS = [
  'name',
  'description',
  'category',
  'gtin',
  'serialNumber',
  'jurisdiction',
  'granularity',
  'companyPrefixLength',
] as const;

/** Columns an import file must have. */
export const REQUIRED_PRODUCT_COLUMNS = ['name', 'description', 'category', 'gtin', 'serialNumber'] as const;

/** The columns of a category's import template: product columns, then the extension fields. */
export function importTemplateColumns(schema: CategorySchemaVersion): string[] {
  return [...PRODUCT_COLUMNS, ...Object.keys(schema.fieldSchema.properties)];
}

/** Quotes a CSV field when RFC 4180 §2 (6) requires it. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) || /^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** RFC 4180 CSV: the header line of the template, CRLF-terminated. */
export function renderImportTemplate(schema: CategorySchemaVersion): string {
  return `${importTemplateColumns(schema).map(csvField).join(',')}\r\n`;
}
