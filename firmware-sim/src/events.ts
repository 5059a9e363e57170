/**
 * A typed event bus: every emitter declares its event map, and a listener that throws is logged
 * and contained, never allowed to break the device (STYLE principle 9).
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
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        (listener as Listener<M[K]>)(...args);
      } catch (err) {
        this.onListenerError(String(event), err);
      }
    }
  }
}
