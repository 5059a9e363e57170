import { describe, expect, it } from 'vitest';
import { FaultController } from './faults.js';
import { defaultWrongContent } from './wrong-content.js';

describe('FaultController', () => {
  it('numbers formats and hands each its script once, plus the standing faults', () => {
    const f = new FaultController();
    f.scriptLabel(2, 'smudged');
    f.scriptNext('voidTag');
    expect([...f.startFormat().faults]).toEqual(['voidTag']);
    f.set('wrongContent', true);
    const second = f.startFormat();
    expect(second.formatIndex).toBe(2);
    expect([...second.faults].sort()).toEqual(['smudged', 'wrongContent']);
    f.set('wrongContent', false);
    expect([...f.startFormat().faults]).toEqual([]);
  });

  it('reports changes and refuses unknown names and bad baud rates', () => {
    const f = new FaultController();
    const seen: string[] = [];
    f.events.on('changed', (name, on) => seen.push(`${name}=${on}`));
    f.set('paperOut', true);
    f.set('paperOut', true);
    f.clear();
    expect(seen).toEqual(['paperOut=true', 'paperOut=false']);
    expect(() => f.set('jam' as 'paperOut', true)).toThrow(/unknown fault/);
    expect(() => f.setBaudRate(12.5)).toThrow(/baud/);
    expect(() => f.scriptLabel(0, 'smudged')).toThrow(/1 or more/);
  });
});

describe('defaultWrongContent', () => {
  it('changes the last character', () => {
    expect(defaultWrongContent('https://id.example.com/01/09506000134352/21/2')).toBe(
      'https://id.example.com/01/09506000134352/21/3',
    );
    expect(defaultWrongContent('ABC')).toBe('ABX');
    expect(defaultWrongContent('9')).toBe('0');
  });
});
