/**
 * A typed event emitter: every emitter declares its event map, and one listener's throw is handed to
 * `onListenerError` and contained, never breaking the emitter or the other listeners (STYLE principle 9).
 *
 * @example
 * const events = new TypedEvents<{ line: [text: string] }>((event, err) => log.warn({ event, err }));
 * const off = events.on('line', (text) => console.log(text));
 * events.emit('line', 'hello');
 * off();
 */

/** Map from event name to the tuple of its arguments. */
export type EventMap = Record<string, unknown[]>;

type Listener<A extends unknown[]> = (...args: A) => void;

export class TypedEvents<M extends EventMap> {
  private readonly listeners = new Map<keyof M, Set<unknown>>();

  constructor(private readonly onListenerError: (event: string, err: unknown) => void = () => {}) {}

  /** Subscribes; returns the function that unsubscribes. */
  on<K extends keyof M>(event: K, listener: Listener<M[K]>): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Subscribes for the next event only. */
  once<K extends keyof M>(event: K, listener: Listener<M[K]>): () => void {
    const off = this.on(event, (...args) => {
      off();
      listener(...args);
    });
    return off;
  }

  emit<K extends keyof M>(event: K, ...args: M[K]): void {
    // A copy: a listener may unsubscribe itself (once) while we iterate.
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as Listener<M[K]>)(...args);
      } catch (err) {
        this.onListenerError(String(event), err);
      }
    }
  }
}
