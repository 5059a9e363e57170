/** Test helper: validates documents against the GS1 EPCIS 2.0 JSON Schema in ../shared/vectors/epcis/. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

let validator: ValidateFunction | undefined;

/** The schema's `$schema` is draft-07, so the default Ajv class (draft-07) is the right one. */
export function epcisSchemaValidator(): ValidateFunction {
  if (validator) return validator;
  const dir =
    process.env.DPP_VECTORS_DIR ?? fileURLToPath(new URL('../../../shared/vectors/', import.meta.url));
  const schema = JSON.parse(readFileSync(resolve(dir, 'epcis/EPCIS-JSON-Schema.json'), 'utf8')) as {
    $schema: string;
  };
  if (!schema.$schema.includes('draft-07')) throw new Error(`unexpected JSON Schema draft ${schema.$schema}`);
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats.default(ajv);
  validator = ajv.compile(schema);
  return validator;
}

/** The schema's errors for a document, or [] when it is valid. */
export function epcisSchemaErrors(document: unknown): string[] {
  const validate = epcisSchemaValidator();
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
