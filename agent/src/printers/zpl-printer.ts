/**
 * The driver of a ZPL printer on a two-way line. Status with `~HS`, falling back to `~HQES` when the printer
 * keeps quiet (the guide says it does not answer `~HS` while media out, ribbon out or head open); both
 * parsed by the shared `ZplResponseParser`, which also yields the `^HV` read-backs of printed labels.
 *
 * Completion evidence: with RFID, the `^HV` answer of the label (`EPC:`) equals the EPC written; with NFC,
 * the `^HV` answer of its NFC tag (`NFC:`) decodes to an NDEF URI record of the Digital Link; a label with
 * both answers both, and is good only when both are (a VOID label answers its blank tags; after `RFID_TRIES`
 * of those the printer holds the format in error mode); without tags, `~HS` shows the format left the buffer
 * and nothing stops the printer.
 */
import {
  ZPL_NFC_READ_BACK,
  uriOfTagData,
  ZPL_CANCEL_ALL,
  ZPL_PAUSE,
  ZPL_QUERY_ERROR_STATUS,
  ZPL_QUERY_HOST_STATUS,
  ZPL_RESUME,
  ZplResponseParser,
  type PrinterStatus,
  type ZplResponse,
} from '@dpp/shared';
import { AgentError, isAgentError } from '../errors.js';
import { RFID_TRIES } from '../render/zpl.js';
import type { ByteLink, PrinterTransport, SendReceipt } from '../transports/index.js';
import { abortReason, sleep } from '../util/time.js';
import type { Completion, CompletionOptions, PrinterDriver } from './types.js';

/** The URI of an NFC read-back (the tag's data area in hex), or null when it holds no NDEF URI record. */
function uriOfReadBack(hex: string): string | null {
  const data = hex.trim();
  if (!/^(?:[0-9A-Fa-f]{2})*$/.test(data)) return null;
  try {
    return uriOfTagData(new Uint8Array(Buffer.from(data, 'hex')));
  } catch {
    return null;
  }
}

export interface ZplPrinterOptions {
  name: string;
  transport: PrinterTransport & { link: ByteLink };
  /** How long a status query waits for each answer. */
  statusTimeoutMs: number;
  /** Status poll period while waiting for a label without RFID. */
  pollMs?: number;
}

type Kind = ZplResponse['kind'];
interface Waiter {
  kind: Kind;
  resolve(r: ZplResponse): void;
  reject(err: unknown): void;
}

export class ZplPrinter implements PrinterDriver {
  readonly language = 'zpl' as const;
  readonly twoWay = true;
  private readonly parser = new ZplResponseParser();
  private readonly answers: ZplResponse[] = [];
  private readonly waiters = new Set<Waiter>();
  private queries: Promise<unknown> = Promise.resolve();
  private readonly offs: Array<() => void>;

  constructor(private readonly options: ZplPrinterOptions) {
    const link = options.transport.link;
    this.offs = [
      link.events.on('data', (chunk) => {
        for (const r of this.parser.push(chunk.toString('latin1'))) {
          if (r.kind === 'garbage') continue;
          this.answers.push(r);
        }
        this.serve();
      }),
      link.events.on('close', () => {
        this.parser.reset();
        const err = new AgentError('TRANSPORT_CLOSED', `${link.target}: the line dropped`);
        for (const w of this.waiters) w.reject(err);
        this.waiters.clear();
      }),
    ];
  }

  get name(): string {
    return this.options.name;
  }

  get transport(): PrinterTransport {
    return this.options.transport;
  }

  private get link(): ByteLink {
    return this.options.transport.link;
  }

  private serve(): void {
    for (const w of [...this.waiters]) {
      const i = this.answers.findIndex((a) => a.kind === w.kind);
      if (i < 0) continue;
      const [answer] = this.answers.splice(i, 1);
      this.waiters.delete(w);
      w.resolve(answer!);
    }
  }

  /** The next answer of `kind`; rejects with TIMEOUT-like PRINTER_NO_ANSWER, the abort reason, or a line drop. */
  private next<K extends Kind>(
    kind: K,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Extract<ZplResponse, { kind: K }>> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        kind,
        resolve: (r) => {
          done();
          resolve(r as Extract<ZplResponse, { kind: K }>);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        waiter.reject(
          new AgentError('PRINTER_NO_ANSWER', `${this.name}: no ${kind} answer within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      const onAbort = () => {
        this.waiters.delete(waiter);
        waiter.reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(waiter);
      this.serve();
    });
  }

  private drop(kind: Kind): void {
    for (let i = this.answers.length - 1; i >= 0; i--)
      if (this.answers[i]!.kind === kind) this.answers.splice(i, 1);
  }

  /** One query at a time on the line, so answers pair with their questions. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queries.then(fn, fn);
    this.queries = run.catch(() => undefined);
    return run;
  }

  status(): Promise<PrinterStatus> {
    return this.exclusive(async () => {
      const t = this.options.statusTimeoutMs;
      this.drop('hostStatus');
      this.drop('errorStatus');
      await this.link.write(Buffer.from(ZPL_QUERY_HOST_STATUS, 'latin1'));
      try {
        return (await this.next('hostStatus', t)).status;
      } catch (err) {
        if (!isAgentError(err, 'PRINTER_NO_ANSWER')) throw err;
      }
      await this.link.write(Buffer.from(ZPL_QUERY_ERROR_STATUS, 'latin1'));
      return (await this.next('errorStatus', t)).status;
    });
  }

  async send(payload: Buffer, _name?: string, options: { behind?: boolean } = {}): Promise<SendReceipt> {
    // Answers of an earlier, abandoned label must not count for this one; but with a format ahead of this
    // one still printing, the answers on the line are that label's.
    if (!options.behind) this.drop('hostVerification');
    return this.options.transport.send(payload, this.name);
  }

  async awaitCompletion(options: CompletionOptions): Promise<Completion> {
    return options.expectedEpc || options.expectedNfcUri
      ? this.awaitReadBack(options)
      : this.awaitBufferEmpty(options);
  }

  /**
   * Waits for the read-backs of each label the format prints, VOID ones included, until one label reads back
   * every tag as written: the EPC (`EPC:`) and the NFC tag's URI (`NFC:`, decoded from its NDEF TLV; null
   * when it holds no URI record). A read-back of a label sent later means this one went unanswered.
   */
  private async awaitReadBack(o: CompletionOptions): Promise<Completion> {
    const expectedEpc = o.expectedEpc?.toUpperCase();
    const expectedUri = o.expectedNfcUri;
    const deadline = Date.now() + o.timeoutMs;
    const watcher = new AbortController();
    const watch = this.watchStatus(o, watcher.signal);
    let voids = 0;
    try {
      for (;;) {
        const label: { epc?: string; uri?: string | null } = {};
        while (
          (expectedEpc !== undefined && label.epc === undefined) ||
          (expectedUri !== undefined && label.uri === undefined)
        ) {
          const answer = await this.nextReadBack(deadline, o);
          const nfc = answer.header === ZPL_NFC_READ_BACK.header;
          // A second answer of the same tag before the other one: the other answer of this label is lost.
          if (nfc ? label.uri !== undefined : label.epc !== undefined) {
            this.answers.unshift(answer);
            break;
          }
          if (nfc) label.uri = uriOfReadBack(answer.data);
          else label.epc = answer.data.trim().toUpperCase();
          const later = nfc
            ? label.uri !== expectedUri && label.uri !== null && !!o.sentLaterLink?.(label.uri!)
            : label.epc !== expectedEpc && !!o.sentLater?.(label.epc!);
          if (later) {
            // A later label answered: this one went unanswered (its answer was lost with a line). It stays for
            // that label's own wait; this one is in doubt.
            this.answers.unshift(answer);
            throw new AgentError('PRINT_TIMEOUT', `${this.name}: a later label answered before this one`, {
              details: { readBack: nfc ? label.uri : label.epc },
            });
          }
        }
        const epcOk = expectedEpc === undefined || label.epc === expectedEpc;
        const uriOk = expectedUri === undefined || label.uri === expectedUri;
        if (epcOk && uriOk) {
          o.onOut?.();
          watcher.abort();
          await watch;
          const statusAfter = await this.status().catch(() => null);
          return {
            evidence: 'printer',
            statusAfter,
            ...(label.epc !== undefined ? { epcReadBack: label.epc } : {}),
            ...(typeof label.uri === 'string' ? { nfcReadBack: label.uri } : {}),
            voidLabels: voids,
          };
        }
        voids++;
        o.onVoidOut?.();
        if (voids >= RFID_TRIES) throw this.readBackMismatch(epcOk, label, o, voids);
      }
    } finally {
      watcher.abort();
      await watch;
    }
  }

  private async nextReadBack(deadline: number, o: CompletionOptions) {
    const left = deadline - Date.now();
    if (left <= 0) throw this.timeout(o.timeoutMs);
    try {
      return await this.next('hostVerification', left, o.signal);
    } catch (err) {
      if (isAgentError(err, 'PRINTER_NO_ANSWER')) throw this.timeout(o.timeoutMs);
      throw err;
    }
  }

  private readBackMismatch(
    epcOk: boolean,
    label: { epc?: string; uri?: string | null },
    o: CompletionOptions,
    voids: number,
  ): AgentError {
    if (!epcOk) {
      return new AgentError(
        'RFID_READBACK_MISMATCH',
        `${this.name}: the tag read back ${label.epc ?? 'nothing'}, not ${o.expectedEpc}, on ${voids} labels`,
        { details: { readBack: label.epc ?? null, expected: o.expectedEpc, voidLabels: voids } },
      );
    }
    return new AgentError(
      'NFC_READBACK_MISMATCH',
      `${this.name}: the NFC tag read back ${label.uri ?? 'no URI record'}, not ${o.expectedNfcUri}, on ${voids} labels`,
      { details: { readBack: label.uri ?? null, expected: o.expectedNfcUri, voidLabels: voids } },
    );
  }

  /** Polls status while a label prints, for the console and MQTT. */
  private async watchStatus(o: CompletionOptions, signal: AbortSignal): Promise<void> {
    if (!o.onStatus) return;
    while (!signal.aborted) {
      try {
        await sleep(1000, signal);
        o.onStatus(await this.status());
      } catch {
        // aborted, or the printer is silent for a moment: the read-back wait decides
      }
    }
  }

  private async awaitBufferEmpty(o: CompletionOptions): Promise<Completion> {
    const deadline = Date.now() + o.timeoutMs;
    let last: PrinterStatus | null = null;
    for (;;) {
      try {
        last = await this.status();
        o.onStatus?.(last);
        if (last.source === 'HS' && last.ready && last.formatsInBuffer === 0 && last.partialFormat === false)
          return { evidence: 'printer', statusAfter: last, voidLabels: 0 };
      } catch (err) {
        if (!isAgentError(err, 'PRINTER_NO_ANSWER') && !isAgentError(err, 'TRANSPORT_ERROR')) throw err;
      }
      if (Date.now() >= deadline) throw this.timeout(o.timeoutMs, last);
      await sleep(this.options.pollMs ?? 100, o.signal);
    }
  }

  private timeout(ms: number, last?: PrinterStatus | null): AgentError {
    return new AgentError('PRINT_TIMEOUT', `${this.name}: the label was not printed within ${ms} ms`, {
      details: last ? { errors: last.errors, formatsInBuffer: last.formatsInBuffer } : undefined,
    });
  }

  async cancelHeld(): Promise<void> {
    await this.link.write(Buffer.from(ZPL_CANCEL_ALL, 'latin1'));
  }

  /**
   * `~HS` counts the format under the head among those in the buffer, and `~JA` cannot stop a label already
   * printing (the printer finishes it), so a count and a cancel alone do not prove a label stays in. The
   * printer is paused first (`~PP`: it finishes the label under the head, then starts no other); a label
   * coming out meanwhile lowers the count and the watch starts again; the count is trusted once it has held
   * still for `settleMs`, longer than any one label takes. Then `~JA`, and a last `~HS` must show the buffer
   * empty: the answer is how many formats were held and never started (the newest ones sent: the printer
   * prints in order), 0 when none were. The printer is resumed after, unless it was paused before.
   */
  async cancelUnstarted(settleMs: number, signal?: AbortSignal): Promise<number | null> {
    const before = await this.status();
    if (before.formatsInBuffer === null) return null;
    if (before.formatsInBuffer === 0) return 0;
    await this.link.write(Buffer.from(ZPL_PAUSE, 'latin1'));
    try {
      let count = before.formatsInBuffer;
      let stillSince = Date.now();
      while (Date.now() - stillSince < settleMs) {
        await sleep(Math.min(this.options.pollMs ?? 100, settleMs), signal);
        const now = (await this.status()).formatsInBuffer;
        if (now === null) return null;
        if (now === 0) return 0; // everything it held was under the head: it came out
        if (now !== count) [count, stillSince] = [now, Date.now()];
      }
      await this.cancelHeld();
      return (await this.status()).formatsInBuffer === 0 ? count : null;
    } finally {
      if (!before.paused) await this.link.write(Buffer.from(ZPL_RESUME, 'latin1')).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    for (const off of this.offs) off();
    await this.options.transport.close();
  }
}
