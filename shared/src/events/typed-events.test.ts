import { describe, expect, it } from 'vitest';
import { TypedEvents } from './typed-events.js';

describe('TypedEvents', () => {
  it('delivers to every listener, and once only once', () => {
    const events = new TypedEvents<{ n: [value: number] }>();
    const seen: string[] = [];
    const off = events.on('n', (v) => seen.push(`on ${v}`));
    events.once('n', (v) => seen.push(`once ${v}`));
    events.emit('n', 1);
    events.emit('n', 2);
    off();
    events.emit('n', 3);
    expect(seen).toEqual(['on 1', 'once 1', 'on 2']);
  });

  it('contains a throwing listener: the others still run and the error is reported', () => {
    const errors: string[] = [];
    const events = new TypedEvents<{ tick: [] }>((event, err) => errors.push(`${event}: ${String(err)}`));
    let after = 0;
    events.on('tick', () => {
      throw new Error('boom');
    });
    events.on('tick', () => after++);
    expect(() => events.emit('tick')).not.toThrow();
    expect(after).toBe(1);
    expect(errors).toEqual(['tick: Error: boom']);
  });
});
