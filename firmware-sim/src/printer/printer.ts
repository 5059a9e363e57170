/**
 * The simulated ZPL label printer with its RFID encoder: answers the host status queries at once,
 * buffers complete formats, and prints them one by one unless a condition stops it. Paper out,
 * ribbon out, head open and pause hold formats in the buffer (`~HS` counts them) until cleared;
 * the printer still answers `~HS` and `~HQES` meanwhile.
 */
import {
  formatHostStatus,
  formatHqesStatus,
  type HostStatus,
  type HostStatusSerialSettings,
  type HqesStatus,
  type ZplCommand,
  TypedEvents,
} from '@dpp/shared';
import type { FaultController } from '../faults/faults.js';
import type { SimLogger } from '../log.js';
import type { LabelRenderer } from '../render/zpl-renderer.js';
import type { LabelStore } from '../render/label-store.js';
import type { RfidEncoder } from '../rfid/encoder.js';
import type { Gen2Tag } from '../rfid/tag.js';
import type { NfcEncoder } from '../nfc/encoder.js';
import type { Type2Tag } from '../nfc/type2-tag.js';
import type { DeviceConnection } from '../transports/types.js';
import { interpretFormat, type RfidSetup } from './format.js';
import type { PrinterMechanics } from './mechanics.js';
import { PrintEngine } from './print-engine.js';
import { Session, type FormatJob } from './session.js';
import { hostStatusOf, hqesOf, type PrinterState } from './status.js';
import type { PrintedLabel, PrinterEvents } from './types.js';

export interface PrinterConfig {
  dpmm: number;
  widthDots: number;
  lengthDots: number;
  serial: HostStatusSerialSettings;
  /**
   * `answer` (default): `~HS` is answered in every state, as the issue and most field reports have
   * it. `silent`: no answer while media out, ribbon out or head open, as the current guide's ~HS page
   * says ("the printer will not send a response to the host if ... MEDIA OUT, RIBBON OUT, HEAD OPEN").
   */
  hostStatusWhenFaulted: 'answer' | 'silent';
  /**
   * How long each label is under the head before it comes out (on top of the time rendering takes). Meanwhile
   * `~HS` still counts its format in the buffer and `~JA` cannot stop it, as on a real printer.
   */
  headMs: number;
  /** How long encoding and printing take (mechanics.ts); null: as fast as the rendering goes. */
  mechanics: PrinterMechanics | null;
  rfid: boolean;
  /** An NFC (HF) encoder is fitted: it runs the `^WT`/`^RT` fields. */
  nfc: boolean;
  /** Until a format sends `^RS`: the printer's defaults (3 tries, error handling N). */
  rfidSetup: RfidSetup;
  wrongContent: (payload: string) => string;
}

export interface PrinterDeps {
  faults: FaultController;
  encoder: RfidEncoder;
  nfcEncoder: NfcEncoder;
  renderer: LabelRenderer;
  store: LabelStore;
  log: SimLogger;
}

export class Printer {
  readonly events: TypedEvents<PrinterEvents>;
  private readonly engine: PrintEngine;
  private readonly sessions = new Set<Session>();
  private readonly queue: FormatJob[] = [];
  private printing: Promise<void> | null = null;
  private rfidErrorMode = false;
  private widthDots: number;
  private lengthDots: number;
  private rfidSetup: RfidSetup;
  private closed = false;

  constructor(
    private readonly config: PrinterConfig,
    private readonly deps: PrinterDeps,
  ) {
    this.events = new TypedEvents<PrinterEvents>((event, err) =>
      deps.log.warn('listener failed', { event, err: String(err) }),
    );
    this.widthDots = config.widthDots;
    this.lengthDots = config.lengthDots;
    this.rfidSetup = { ...config.rfidSetup };
    this.engine = new PrintEngine({
      ...deps,
      events: this.events,
      dpmm: config.dpmm,
      rfid: config.rfid,
      mechanics: config.mechanics,
      wrongContent: config.wrongContent,
      voidTagSet: () => deps.faults.get('voidTag'),
      nfc: config.nfc,
      voidNfcTagSet: () => deps.faults.get('voidNfcTag'),
    });
    deps.faults.events.on('changed', () => this.pump());
  }

  get labels(): readonly PrintedLabel[] {
    return this.engine.labels;
  }

  tagOf(labelIndex: number): Gen2Tag | undefined {
    return this.engine.tagOf(labelIndex);
  }

  nfcTagOf(labelIndex: number): Type2Tag | undefined {
    return this.engine.nfcTagOf(labelIndex);
  }

  /** Serves one host line. */
  attach(connection: DeviceConnection): void {
    const session = new Session(
      connection,
      {
        control: (cmd, s) => this.control(cmd, s),
        startFormat: () => this.deps.faults.startFormat(),
        formatComplete: (job) => this.enqueue(job),
        formatDropped: (formatIndex, reason) => this.events.emit('formatDropped', { formatIndex, reason }),
      },
      this.deps.log,
    );
    this.sessions.add(session);
    connection.events.on('close', () => this.sessions.delete(session));
  }

  state(): PrinterState {
    const f = this.deps.faults;
    return {
      paperOut: f.get('paperOut'),
      ribbonOut: f.get('ribbonOut'),
      headOpen: f.get('headOpen'),
      paused: f.get('paused'),
      rfidErrorMode: this.rfidErrorMode,
      formatsInBuffer: this.queue.length,
      partialFormat: [...this.sessions].some((s) => s.partialFormat),
      labelLengthDots: this.lengthDots,
      serial: this.config.serial,
    };
  }

  hostStatus(): HostStatus {
    return hostStatusOf(this.state());
  }

  hqes(): HqesStatus {
    return hqesOf(this.state());
  }

  /** The operator presses PAUSE to resume, or clears the RFID error. */
  resume(): void {
    this.rfidErrorMode = false;
    this.deps.faults.set('paused', false);
    this.pump();
  }

  /** Resolves when nothing is being printed. */
  async idle(): Promise<void> {
    while (this.printing) await this.printing;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
  }

  private control(cmd: ZplCommand, session: Session): void {
    const s = this.state();
    switch (cmd.name) {
      case 'HS':
        if (this.config.hostStatusWhenFaulted === 'silent' && (s.paperOut || s.ribbonOut || s.headOpen))
          return;
        void session.reply(formatHostStatus(hostStatusOf(s)));
        return;
      case 'HQ':
        if (cmd.params.toUpperCase() === 'ES') void session.reply(formatHqesStatus(hqesOf(s)));
        else this.deps.log.info('~HQ query type not simulated', { params: cmd.params });
        return;
      case 'PP':
        this.deps.faults.set('paused', true);
        return;
      case 'PS':
        this.deps.faults.set('paused', false);
        return;
      case 'JA':
        for (const job of this.queue.splice(this.printing ? 1 : 0)) {
          this.events.emit('formatDropped', { formatIndex: job.formatIndex, reason: 'cancelled by ~JA' });
        }
        return;
      default:
        this.deps.log.info('control command not simulated', { command: cmd.raw });
    }
  }

  private enqueue(job: FormatJob): void {
    this.queue.push(job);
    this.events.emit('formatReceived', { formatIndex: job.formatIndex });
    this.pump();
  }

  private blocked(): boolean {
    const s = this.state();
    return s.paperOut || s.ribbonOut || s.headOpen || s.paused || s.rfidErrorMode;
  }

  private pump(): void {
    if (this.printing || this.closed || this.queue.length === 0 || this.blocked()) return;
    const job = this.queue[0] as FormatJob;
    this.printing = this.printOne(job)
      .catch((err: unknown) => {
        this.deps.log.warn('print failed; format dropped', {
          formatIndex: job.formatIndex,
          err: String(err),
        });
        this.queue.shift();
        this.events.emit('formatDropped', { formatIndex: job.formatIndex, reason: 'print failed' });
      })
      .finally(() => {
        this.printing = null;
        this.pump();
      });
  }

  private async printOne(job: FormatJob): Promise<void> {
    const format = interpretFormat(job.commands);
    this.widthDots = format.printWidthDots ?? this.widthDots;
    this.lengthDots = format.labelLengthDots ?? this.lengthDots;
    this.rfidSetup = { ...this.rfidSetup, ...format.rfidSetup };
    const settings = { widthDots: this.widthDots, lengthDots: this.lengthDots, rfidSetup: this.rfidSetup };
    if (this.config.headMs > 0) await new Promise((r) => setTimeout(r, this.config.headMs));
    const result = await this.engine.run(job, format, settings, () => this.closed);
    if (result.printed || this.closed) {
      this.queue.shift();
      return;
    }
    const onError = this.rfidSetup.onError;
    this.deps.log.info('tag encoding failed on every try', {
      formatIndex: job.formatIndex,
      tries: this.rfidSetup.tries,
      onError,
    });
    this.events.emit('rfidError', { formatIndex: job.formatIndex, onError });
    // A scripted void tag hits the first run of its format; after a pause or error it is tried afresh.
    job.faults.delete('voidTag');
    job.faults.delete('voidNfcTag');
    if (onError === 'N') {
      this.queue.shift();
      await this.engine.answer(job, format, result.fieldValues, 'F');
      this.events.emit('formatDropped', {
        formatIndex: job.formatIndex,
        reason: 'RFID encoding failed (^RS error handling N)',
      });
    } else if (onError === 'P') {
      this.deps.faults.set('paused', true);
    } else {
      this.rfidErrorMode = true;
    }
  }
}
