/** A {@link DeviceConnection} decorator that paces both directions at the line's baud rate. */
import { TypedEvents } from '@dpp/shared';
import type { Clock } from './clock.js';
import { Pacer } from './pacer.js';
import type { ConnectionEvents, DeviceConnection } from './types.js';

export class PacedConnection implements DeviceConnection {
  readonly events: TypedEvents<ConnectionEvents>;
  private readonly outgoing: Pacer;
  private readonly incoming: Pacer;

  constructor(
    private readonly inner: DeviceConnection,
    baudRate: () => number | null,
    clock?: Clock,
  ) {
    this.events = new TypedEvents<ConnectionEvents>();
    this.outgoing = new Pacer(
      baudRate,
      (chunk) => (this.inner.closed ? undefined : this.inner.write(chunk)),
      clock,
    );
    this.incoming = new Pacer(baudRate, (chunk) => this.events.emit('data', chunk), clock);
    inner.events.on('data', (chunk) => void this.incoming.push(chunk));
    inner.events.on('close', () => {
      this.outgoing.stop();
      this.incoming.stop();
      this.events.emit('close');
    });
  }

  get id(): string {
    return this.inner.id;
  }

  get closed(): boolean {
    return this.inner.closed;
  }

  write(data: Buffer): Promise<void> {
    return this.outgoing.push(data);
  }

  drop(): void {
    this.inner.drop();
  }
}
