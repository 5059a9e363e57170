/**
 * The text of a statement composed from other statements' texts (a write set's or a read set's one statement on
 * PostgreSQL), kept per composition: the parts of a set are mostly prepared statements (store/prepared.ts), the
 * same string objects call after call, so finding the composition again costs a lookup per part, where composing
 * it costs a scan of every part's text to renumber its parameters, and the result is again the same string object
 * (which PostgreSQL's statement names find without hashing a new text). Parts that are new strings each call still
 * compose correctly; they only fill the cache, which forgets everything past {@link MAX_ENTRIES} and starts again.
 */

/** Compositions and trie nodes kept at most, together. */
const MAX_ENTRIES = 4096;

interface Node {
  next: Map<string, Node>;
  /** The composed texts that end here, by what else decides them (names, expectations). */
  texts: Map<string, string>;
}

export class ComposedTexts {
  private root: Node = { next: new Map(), texts: new Map() };
  private entries = 0;

  /** The text composed of `parts` and `rest` (what else it depends on), made by `compose` the first time. */
  text(parts: readonly string[], rest: string, compose: () => string): string {
    let node = this.root;
    for (const part of parts) {
      let next = node.next.get(part);
      if (!next) {
        next = { next: new Map(), texts: new Map() };
        node.next.set(part, next);
        this.entries += 1;
      }
      node = next;
    }
    let text = node.texts.get(rest);
    if (text === undefined) {
      text = compose();
      if (this.entries >= MAX_ENTRIES) {
        this.root = { next: new Map(), texts: new Map() };
        this.entries = 0;
      } else {
        node.texts.set(rest, text);
        this.entries += 1;
      }
    }
    return text;
  }
}
