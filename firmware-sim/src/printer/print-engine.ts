/**
 * The print head and the tag encoders (UHF RFID, and NFC where fitted) working one format: for each try the
 * fresh inlays are encoded, the label is rendered (VOID over it when a tag write failed, smeared when smudged, with other QR data
 * on a wrong-content fault), stored, and the `^HV` answers go back to the host that sent the format.
 */
import { formatHostVerification, type TypedEvents } from '@dpp/shared';
import type { SimLogger } from '../log.js';
import { printableZpl } from '../render/printable-zpl.js';
import { smudgePng } from '../render/smudge.js';
import type { LabelRenderer } from '../render/zpl-renderer.js';
import type { LabelStore } from '../render/label-store.js';
import { epcWriteOf, type RfidEncoder, type RfidField } from '../rfid/encoder.js';
import type { Gen2Tag } from '../rfid/tag.js';
import { nfcUriOf, type NfcEncoder, type NfcField } from '../nfc/encoder.js';
import type { Type2Tag } from '../nfc/type2-tag.js';
import { encodeMs, printMs, type PrinterMechanics } from './mechanics.js';
import { fieldText, splitQrData, type LabelFormat, type RfidSetup } from './format.js';
import type { FormatJob } from './session.js';
import type { PrintedLabel, PrinterEvents } from './types.js';

export interface EngineSettings {
  widthDots: number;
  lengthDots: number;
  rfidSetup: RfidSetup;
}

export interface EngineDeps {
  encoder: RfidEncoder;
  renderer: LabelRenderer;
  store: LabelStore;
  events: TypedEvents<PrinterEvents>;
  log: SimLogger;
  dpmm: number;
  /** Whether the printer has an RFID encoder; without one `^RF` fields are ignored. */
  rfid: boolean;
  wrongContent: (payload: string) => string;
  /** The standing void-tag fault. */
  voidTagSet: () => boolean;
  /** The NFC encoder; fitted when `nfc`, else `^WT`/`^RT` fields are ignored. */
  nfcEncoder: NfcEncoder;
  nfc: boolean;
  /** The standing void-NFC-tag fault. */
  voidNfcTagSet: () => boolean;
  /** How long encoding and printing take (mechanics.ts); null: instantly, beyond the rendering's own time. */
  mechanics: PrinterMechanics | null;
}

const wait = (ms: number) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

export interface RunResult {
  /** A label was printed with every tag write successful. */
  printed: boolean;
  /** `^FN` values of the last try. */
  fieldValues: Map<number, string>;
}

export class PrintEngine {
  readonly labels: PrintedLabel[] = [];
  private readonly tags = new Map<number, Gen2Tag>();
  private readonly nfcTags = new Map<number, Type2Tag>();

  constructor(private readonly deps: EngineDeps) {}

  /** The tag under physical label `index`. */
  tagOf(index: number): Gen2Tag | undefined {
    return this.tags.get(index);
  }

  /** The NFC tag under physical label `index`. */
  nfcTagOf(index: number): Type2Tag | undefined {
    return this.nfcTags.get(index);
  }

  async run(
    job: FormatJob,
    format: LabelFormat,
    settings: EngineSettings,
    stopped: () => boolean,
  ): Promise<RunResult> {
    const fields = format.items.flatMap((i) => (i.kind === 'field' ? [i.field] : []));
    const rfidFields: RfidField[] = this.deps.rfid
      ? fields
          .filter((f) => f.kind === 'rfid')
          .map((f) => ({ params: f.rfidParams ?? '', data: f.data, fieldNumber: f.fieldNumber }))
      : [];
    const nfcFields: NfcField[] = this.deps.nfc
      ? fields.flatMap((f) => (f.kind === 'nfc' && f.nfc ? [{ ...f.nfc, data: f.data }] : []))
      : [];
    const encodes = rfidFields.length > 0 || nfcFields.length > 0;
    const tries = encodes ? settings.rfidSetup.tries : 1;
    let fieldValues = new Map<number, string>();
    for (let attempt = 1; attempt <= tries && !stopped(); attempt++) {
      fieldValues = new Map(
        fields.flatMap((f) =>
          f.fieldNumber !== undefined && f.data !== undefined && f.kind !== 'rfid' && f.kind !== 'nfc'
            ? [[f.fieldNumber, f.data] as const]
            : [],
        ),
      );
      const tag = this.deps.rfid ? this.deps.encoder.nextTag() : undefined;
      const nfcTag = this.deps.nfc ? this.deps.nfcEncoder.nextTag() : undefined;
      const failWrites = job.faults.has('voidTag') || this.deps.voidTagSet();
      const failNfcWrites = job.faults.has('voidNfcTag') || this.deps.voidNfcTagSet();
      const m = this.deps.mechanics;
      // The inlay is over the antenna: write, then read back to verify, before the label is printed.
      if (m && encodes) await wait(encodeMs(m));
      const rfid =
        tag && rfidFields.length > 0
          ? this.deps.encoder.encode(tag, rfidFields, failWrites)
          : { ok: true, reads: new Map<number, string>() };
      const nfc =
        nfcTag && nfcFields.length > 0
          ? this.deps.nfcEncoder.encode(nfcTag, nfcFields, failNfcWrites)
          : { ok: true, reads: new Map<number, string>() };
      for (const [n, v] of [...rfid.reads, ...nfc.reads]) fieldValues.set(n, v);
      const encoded = { ok: rfid.ok && nfc.ok };
      // The media moves the label under the head meanwhile; it is out when both are done.
      const motion = m ? wait(printMs(m)) : Promise.resolve();
      const label = await this.produce(job, format, settings, {
        attempt,
        tag,
        fieldValues,
        nfcTag,
        isVoid: !encoded.ok,
        epcRequested: epcWriteOf(rfidFields),
      });
      await motion;
      this.out(label);
      if (job.faults.has('dropAfterPrint')) {
        job.session.connection.drop(); // out of the printer, and nothing said about it
        return { printed: encoded.ok, fieldValues };
      }
      await this.answer(job, format, fieldValues, 'L');
      if (encoded.ok) {
        await this.answer(job, format, fieldValues, 'F');
        return { printed: true, fieldValues };
      }
    }
    return { printed: false, fieldValues };
  }

  /** Sends the `^HV` answers of a format that apply per label (`L`) or per format (`F`). */
  async answer(
    job: FormatJob,
    format: LabelFormat,
    values: ReadonlyMap<number, string>,
    appliesTo: 'F' | 'L',
  ): Promise<void> {
    for (const item of format.items) {
      const hv = item.kind === 'field' ? item.field.hostVerification : undefined;
      if (!hv || hv.appliesTo !== appliesTo) continue;
      const text = formatHostVerification(values.get(hv.field) ?? '', hv, hv.maxBytes);
      await job.session.reply(text);
    }
  }

  private async produce(
    job: FormatJob,
    format: LabelFormat,
    settings: EngineSettings,
    t: {
      attempt: number;
      tag: Gen2Tag | undefined;
      nfcTag: Type2Tag | undefined;
      fieldValues: Map<number, string>;
      isVoid: boolean;
      epcRequested: string | null;
    },
  ): Promise<PrintedLabel> {
    const index = this.labels.length + 1;
    const wrong = job.faults.has('wrongContent');
    const printedZpl = printableZpl(format, {
      widthDots: settings.widthDots,
      lengthDots: settings.lengthDots,
      fieldValues: t.fieldValues,
      ...(wrong ? { qrPayload: this.deps.wrongContent } : {}),
      ...(t.isVoid ? { voidLengthDots: settings.rfidSetup.voidLengthDots ?? settings.lengthDots } : {}),
    });
    // The renderer takes text: under ^CI28 the bytes of the line are UTF-8, not one char each.
    let png = await this.deps.renderer.render(fieldText(format, printedZpl), {
      widthDots: settings.widthDots,
      lengthDots: settings.lengthDots,
      dpmm: this.deps.dpmm,
    });
    if (job.faults.has('smudged')) png = await smudgePng(png);
    const pngPath = await this.deps.store.save(index, png, printedZpl);
    if (t.tag) this.tags.set(index, t.tag);
    if (t.nfcTag) this.nfcTags.set(index, t.nfcTag);
    const qrData = format.items.flatMap((i) =>
      i.kind === 'field' && i.field.kind === 'qr' && i.field.data !== undefined ? [i.field.data] : [],
    )[0];
    const payload = qrData === undefined ? null : (splitQrData(qrData)?.payload ?? qrData);
    const label: PrintedLabel = {
      index,
      formatIndex: job.formatIndex,
      attempt: t.attempt,
      zpl: job.commands.map((c) => c.raw).join(''),
      printedZpl,
      png,
      pngPath,
      void: t.isVoid,
      epcRequested: t.epcRequested,
      epc: t.tag ? t.tag.epcHex : null,
      nfcUri: t.nfcTag ? nfcUriOf(t.nfcTag) : null,
      texts: format.items.flatMap((i) =>
        i.kind === 'field' && i.field.kind === 'text' && i.field.data !== undefined
          ? [fieldText(format, i.field.data)]
          : [],
      ),
      content: payload !== null && wrong ? this.deps.wrongContent(payload) : payload,
      faults: [...job.faults],
      printedAt: new Date(),
    };
    return label;
  }

  /** The label left the printer: the scanner over the exit sees it from now on. */
  private out(label: PrintedLabel): void {
    label.printedAt = new Date();
    this.labels.push(label);
    this.deps.log.info('label printed', {
      index: label.index,
      formatIndex: label.formatIndex,
      attempt: label.attempt,
      void: label.void,
      epc: label.epc,
    });
    this.deps.events.emit('labelPrinted', label);
  }
}
