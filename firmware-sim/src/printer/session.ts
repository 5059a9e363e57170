/**
 * One host line into the printer: bytes become commands (across chunks), control commands go to the
 * printer at once, format commands collect between `^XA` and `^XZ`. Holds the disconnect-mid-job
 * fault: the line drops right after the first field of the scripted format arrived.
 */
import { ZplTokenizer, type ZplCommand } from '@dpp/shared';
import type { LabelFault } from '../faults/faults.js';
import type { SimLogger } from '../log.js';
import type { DeviceConnection } from '../transports/types.js';

/** A complete format, waiting to be printed. */
export interface FormatJob {
  formatIndex: number;
  commands: ZplCommand[];
  faults: Set<LabelFault>;
  /** Where `^HV` answers go. */
  session: Session;
}

export interface SessionHandlers {
  /** A `~` command. */
  control(command: ZplCommand, session: Session): void;
  /** A format started; returns its number and label faults. */
  startFormat(): { formatIndex: number; faults: Set<LabelFault> };
  formatComplete(job: FormatJob): void;
  formatDropped(formatIndex: number, reason: string): void;
}

export class Session {
  private readonly tokenizer = new ZplTokenizer();
  private open: { formatIndex: number; faults: Set<LabelFault>; commands: ZplCommand[] } | null = null;

  constructor(
    readonly connection: DeviceConnection,
    private readonly handlers: SessionHandlers,
    private readonly log: SimLogger,
  ) {
    connection.events.on('data', (chunk) => this.receive(chunk));
    connection.events.on('close', () => this.lineClosed());
  }

  /** A format has started arriving and is not complete yet. */
  get partialFormat(): boolean {
    return this.open !== null;
  }

  /** Sends bytes back to the host, unless the line is gone. */
  reply(text: string): Promise<void> {
    if (this.connection.closed) return Promise.resolve();
    return this.connection.write(Buffer.from(text, 'latin1'));
  }

  private receive(chunk: Buffer): void {
    for (const token of this.tokenizer.push(chunk.toString('latin1'))) {
      if (this.connection.closed) return;
      if (token.kind === 'garbage') this.log.debug('garbage skipped', { bytes: token.text.length });
      else this.command(token.command);
    }
  }

  private command(cmd: ZplCommand): void {
    if (cmd.prefix === '~') {
      this.handlers.control(cmd, this);
      return;
    }
    if (cmd.name === 'XA') {
      if (this.open) this.handlers.formatDropped(this.open.formatIndex, 'a new ^XA arrived before ^XZ');
      this.open = { ...this.handlers.startFormat(), commands: [cmd] };
      return;
    }
    if (!this.open) {
      this.log.debug('command outside a format ignored', { command: cmd.raw });
      return;
    }
    this.open.commands.push(cmd);
    if (cmd.name === 'XZ') {
      const { formatIndex, faults, commands } = this.open;
      this.open = null;
      this.handlers.formatComplete({ formatIndex, commands, faults, session: this });
    } else if (cmd.name === 'FS' && this.open.faults.has('disconnect')) {
      const { formatIndex } = this.open;
      this.log.info('dropping the line mid-job (fault)', { formatIndex });
      this.open = null;
      this.tokenizer.reset();
      this.handlers.formatDropped(formatIndex, 'line dropped mid-job');
      this.connection.drop();
    }
  }

  private lineClosed(): void {
    if (this.open) this.handlers.formatDropped(this.open.formatIndex, 'line closed mid-format');
    this.open = null;
    this.tokenizer.reset();
  }
}
