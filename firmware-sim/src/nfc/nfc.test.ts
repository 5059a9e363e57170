import { ndefUriTagData } from '@dpp/shared';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { NfcEncoder, nfcUriOf } from './encoder.js';
import { Type2Tag } from './type2-tag.js';

const LINK = 'https://id.example.com/01/09506000134352/21/ABC-123';
const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
/** The tag data padded to whole 4-byte blocks, as the agent's writer sends it. */
function blocksHex(uri: string): { hex: string; blocks: number } {
  const data = ndefUriTagData(uri);
  const padded = new Uint8Array(Math.ceil(data.length / 4) * 4);
  padded.set(data);
  return { hex: hexOf(padded), blocks: padded.length / 4 };
}

describe('Type 2 tag', () => {
  it('leaves the factory with its capability container and an empty NDEF message', () => {
    const tag = new Type2Tag(5);
    expect(hexOf(tag.read(3, 1))).toBe('E1103E00');
    expect(hexOf(tag.read(4, 1))).toBe('0300FE00');
    expect(nfcUriOf(tag)).toBeNull();
  });

  it('refuses writes to the UID pages, in part pages, and past the data area', () => {
    const tag = new Type2Tag(1);
    expect(() => tag.write(0, new Uint8Array(4))).toThrow(/read-only/);
    expect(() => tag.write(4, new Uint8Array(3))).toThrow(/whole 4-byte pages/);
    expect(() => tag.write(127, new Uint8Array(8))).toThrow(/past the data area/);
  });
});

describe('NfcEncoder', () => {
  const encoder = new NfcEncoder(silentLogger);

  it('runs ^WT then ^RT into a field number, and the tag then holds the URI record', () => {
    const tag = encoder.nextTag();
    const { hex, blocks } = blocksHex(LINK);
    const result = encoder.encode(
      tag,
      [
        { command: 'WT', params: '4,0,1,0,1,N', data: hex },
        { command: 'RT', params: `2,4,${blocks},1,0,1` },
      ],
      false,
    );
    expect(result.ok).toBe(true);
    expect(result.reads.get(2)).toBe(hex);
    expect(nfcUriOf(tag)).toBe(LINK);
  });

  it('fails every write of a void tag, which then reads back its empty NDEF message', () => {
    const tag = encoder.nextTag();
    const { hex, blocks } = blocksHex(LINK);
    const result = encoder.encode(
      tag,
      [
        { command: 'WT', params: '4,0,1,0,1,N', data: hex },
        { command: 'RT', params: `2,4,${blocks},1,0,1` },
      ],
      true,
    );
    expect(result.ok).toBe(false);
    expect(result.reads.get(2)).toMatch(/^0300FE0{5}/);
    expect(nfcUriOf(tag)).toBeNull();
  });

  it('fails a write whose hex is not whole bytes, and one that does not fit the tag', () => {
    const tag = encoder.nextTag();
    expect(encoder.encode(tag, [{ command: 'WT', params: '4,0,1,0,1', data: 'ABC' }], false).ok).toBe(false);
    const big = 'AA'.repeat(500);
    expect(encoder.encode(tag, [{ command: 'WT', params: '4,0,1,0,1', data: big }], false).ok).toBe(false);
    expect(encoder.encode(tag, [{ command: 'WT', params: '4', data: 'ABCD' }], false).ok).toBe(true); // ASCII
    expect(hexOf(tag.read(4, 1))).toBe('41424344');
  });
});
