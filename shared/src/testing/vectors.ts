/**
 * Test-only helper: where the public test vectors live.
 *
 * The vectors are kept outside the repository, in `<repo root>/../shared/vectors/` (in CI the repository
 * is a fresh clone with `shared/` beside it). `DPP_VECTORS_DIR` overrides that folder. Never imported by
 * production code, and not exported from the package door.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the vectors folder.
 *
 * @example
 * vectorsDir(); // '/work/shared/vectors' for a repository at /work/main
 */
export function vectorsDir(): string {
  const override = process.env['DPP_VECTORS_DIR'];
  // This file is <repo>/shared/src/testing/vectors.ts, so the repo root is three folders up.
  const dir = override
    ? resolve(override)
    : fileURLToPath(new URL('../../../../shared/vectors/', import.meta.url));
  if (!existsSync(dir)) {
    throw new Error(`test vectors not found at ${dir}; set DPP_VECTORS_DIR to the shared/vectors folder`);
  }
  return dir;
}

/**
 * Reads a vector file as UTF-8 text, byte for byte (no trimming).
 *
 * @example
 * readVectorText('vc-di-eddsa/eddsa-jcs-2022/docHashJCS.txt');
 */
export function readVectorText(relPath: string): string {
  return readFileSync(resolve(vectorsDir(), relPath), 'utf8');
}

/**
 * Reads and parses a JSON vector file. The result is `unknown`: tests validate its shape before use.
 *
 * @example
 * const vectors = sgtinVectorsSchema.parse(readVectorJson('sgtin96.json'));
 */
export function readVectorJson(relPath: string): unknown {
  return JSON.parse(readVectorText(relPath)) as unknown;
}
