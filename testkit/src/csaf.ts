/**
 * CSAF 2.0 documents checked as security tooling checks them: the BSI validator's strict JSON schema and
 * every mandatory test (OASIS CSAF 2.0 §6.1).
 */
import validateStrict from '@secvisogram/csaf-validator-lib/validateStrict.js';
import * as mandatory from '@secvisogram/csaf-validator-lib/mandatoryTests.js';
import { csaf_2_0_strict } from '@secvisogram/csaf-validator-lib/schemaTests.js';

/** Every problem the validator finds, one line each (`[]` for a valid document). */
export async function csafProblems(doc: unknown): Promise<string[]> {
  const result = await validateStrict([csaf_2_0_strict, ...Object.values(mandatory)], doc);
  return result.tests.flatMap((t) => t.errors.map((e) => `${t.name} ${e.instancePath}: ${e.message}`));
}
