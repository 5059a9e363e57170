/**
 * A typed event emitter: every emitter declares its event map, and one listener's throw is logged and
 * contained, never crashing the emitter or the other listeners.
 */
export type EventMap = Record<string, unknown[]>;

type AnyListener = (...args: unknown[]) => void;

export class TypedEvents<E extends EventMap> {
  private readonly listeners = new Map<keyof E, Set<AnyListener>>();

  constructor(private readonly onListenerError: (event: string, err: unknown) => void = () => {}) {}

  /** Adds a listener; returns the function that removes it. */
  on<K extends keyof E>(event: K, listener: (...args: E[K]) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    const l = listener as unknown as AnyListener;
    set.add(l);
    this.listeners.set(event, set);
    return () => set.delete(l);
  }

  once<K extends keyof E>(event: K, listener: (...args: E[K]) => void): () => void {
    const off = this.on(event, (...args) => {
      off();
      listener(...args);
    });
    return off;
  }

  emit<K extends keyof E>(event: K, ...args: E[K]): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        listener(...args);
      } catch (err) {
        this.onListenerError(String(event), err);
      }
    }
  }
}
