/**
 * A Map that keeps at most `max` entries, for what a process remembers of an unbounded set (verified tokens,
 * prepared statements, imported keys): setting a key it does not hold when it is full forgets the entry set
 * longest ago, and setting a key it holds makes that entry the newest, so an entry in use stays.
 *
 * @example
 * const seen = new BoundedMap<string, number>(2);
 * seen.set('a', 1).set('b', 2).set('a', 3).set('c', 4); // forgets 'b', set longest ago
 * [...seen.keys()]; // ['a', 'c']
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly max: number) {
    super();
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, not ${max}`);
  }

  override set(key: K, value: V): this {
    if (this.has(key)) this.delete(key);
    else if (this.size >= this.max) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
