import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readVectorJson, readVectorText, vectorsDir } from './vectors.js';

describe('test vectors helper', () => {
  const saved = process.env['DPP_VECTORS_DIR'];
  afterEach(() => {
    if (saved === undefined) delete process.env['DPP_VECTORS_DIR'];
    else process.env['DPP_VECTORS_DIR'] = saved;
  });

  it('finds ../shared/vectors beside the repository by default', () => {
    delete process.env['DPP_VECTORS_DIR'];
    expect(vectorsDir()).toMatch(/[/\\]shared[/\\]vectors[/\\]?$/);
    expect(readVectorJson('sgtin96.json')).toHaveProperty('vectors');
  });

  it('honours DPP_VECTORS_DIR and reads text byte for byte', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpp-vectors-'));
    writeFileSync(join(dir, 'a.json'), '{"x":1}');
    writeFileSync(join(dir, 'b.txt'), 'no newline');
    process.env['DPP_VECTORS_DIR'] = dir;
    expect(vectorsDir()).toBe(dir);
    expect(readVectorJson('a.json')).toEqual({ x: 1 });
    expect(readVectorText('b.txt')).toBe('no newline');
    rmSync(dir, { recursive: true });
  });

  it('says how to fix a missing folder', () => {
    process.env['DPP_VECTORS_DIR'] = join(tmpdir(), 'dpp-no-such-vectors-dir');
    expect(() => vectorsDir()).toThrow(/DPP_VECTORS_DIR/);
  });
});
