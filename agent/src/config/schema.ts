/**
 * The agent's configuration file (JSON), validated with zod. Defaults are typed here; the loader applies
 * environment overrides on top, then validates once (`load.ts`).
 */
import { z } from 'zod';
import { isTopicLevel } from '@dpp/shared';
import { PIN_HASH_PATTERN } from '../console/pin.js';

const port = z.number().int().min(1).max(65535);
const positiveMs = z.number().int().positive();

export const SerialLinkSchema = z
  .object({
    type: z.literal('serial'),
    /** Device path, e.g. /dev/ttyUSB0 or a udev link. */
    path: z.string().min(1),
    baudRate: z.number().int().min(300).max(4_000_000).default(9600),
  })
  .strict();

export const TcpLinkSchema = z
  .object({
    type: z.literal('tcp'),
    host: z.string().min(1),
    /** Raw printing port; 9100 by default. */
    port: port.default(9100),
  })
  .strict();

/** A USB id: a number, or four hex digits as lsusb shows them ("0a5f", "0x0a5f"). */
const usbId = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n =
    typeof v === 'number' ? v : /^(0x)?[0-9a-fA-F]{4}$/.test(v) ? parseInt(v.replace(/^0x/, ''), 16) : NaN;
  if (Number.isInteger(n) && n >= 0 && n <= 0xffff) return n;
  ctx.addIssue({
    code: 'custom',
    message: 'must be four hex digits as lsusb shows them (e.g. "0a5f") or 0 to 65535',
  });
  return z.NEVER;
});

export const UsbTransportSchema = z
  .object({
    type: z.literal('usb'),
    /** The printer's USB serial number (iSerialNumber, `lsusb -v` or `dpp-agent printers`): it names the printer across re-plugs. */
    serialNumber: z.string().min(1).max(126),
    /** Also match the vendor id (Zebra: 0a5f). */
    vendorId: usbId.optional(),
    /** Also match the product id. */
    productId: usbId.optional(),
    /** `auto`: Linux's usblp device when the printer has one, else libusb; or only `usblp` / `libusb`. */
    backend: z.enum(['auto', 'usblp', 'libusb']).default('auto'),
  })
  .strict();

export const CupsTransportSchema = z
  .object({
    type: z.literal('cups'),
    /** CUPS queue name (`lp -d <queue>`). */
    queue: z.string().min(1),
    /** The `lp` program; another path for a wrapper. */
    command: z.string().min(1).default('lp'),
    /** Extra `lp` options, e.g. ["-o", "media=Custom.50x30mm"]. */
    options: z.array(z.string()).default([]),
  })
  .strict();

export const SpoolTransportSchema = z
  .object({
    type: z.literal('spool'),
    /** Folder watched by whatever feeds the printer; each label is written there atomically. */
    dir: z.string().min(1),
  })
  .strict();

export const TransportConfigSchema = z.discriminatedUnion('type', [
  SerialLinkSchema,
  TcpLinkSchema,
  UsbTransportSchema,
  CupsTransportSchema,
  SpoolTransportSchema,
]);
export type TransportConfig = z.infer<typeof TransportConfigSchema>;

export const ScannerConfigSchema = z
  .object({
    link: z.discriminatedUnion('type', [SerialLinkSchema, TcpLinkSchema]),
    /** How long one read may take after the trigger. */
    timeoutMs: positiveMs.default(5000),
    /** Extra triggers after a NOREAD before the scan counts as failed. */
    retries: z.number().int().min(0).max(5).default(1),
    /** The scanner has an RFID reader: a missing tag (NOTAG) then fails an RFID label. */
    readsRfid: z.boolean().default(false),
  })
  .strict();
export type ScannerConfig = z.infer<typeof ScannerConfigSchema>;

/** Fields of the label template the printer's media overrides (the job's template gives the rest). */
export const TemplateOverrideSchema = z
  .object({
    widthMm: z.number().positive().max(500).optional(),
    heightMm: z.number().positive().max(1000).optional(),
    qrMagnification: z.number().int().min(1).max(10).optional(),
    textLines: z.array(z.string().max(200)).max(6).optional(),
  })
  .strict();

export const PrinterConfigSchema = z
  .object({
    /** Printer name: the claim names it, and it is an MQTT topic level. */
    name: z.string().min(1).max(64).refine(isTopicLevel, 'must not contain /, + or #'),
    /** `zpl` for label printers and RFID encoders, `pdf` for office printers. */
    language: z.enum(['zpl', 'pdf']),
    transport: TransportConfigSchema,
    /** Print head resolution. */
    dpi: z.union([z.literal(203), z.literal(300), z.literal(600)]).default(203),
    /** An RFID encoder is fitted (ZPL only): jobs that need RFID are claimed, EPCs written and read back. */
    rfid: z.boolean().default(false),
    /**
     * An NFC (HF, 13.56 MHz) encoder is fitted (ZPL only): labels whose template asks for NFC get the Digital
     * Link written to their NFC tag as an NDEF URI record, read back and compared.
     */
    nfc: z.boolean().default(false),
    template: TemplateOverrideSchema.default({}),
    scanner: ScannerConfigSchema.optional(),
    /**
     * `auto`: the device attests when it has evidence (RFID read-back, or a ZPL printer on a two-way line
     * whose status shows the label left the buffer without error); otherwise a human attests. `human`:
     * always a supervisor.
     */
    attestation: z.enum(['auto', 'human']).default('auto'),
    /** How long a status query waits for the answer. */
    statusTimeoutMs: positiveMs.default(2000),
    /** How long a label may take from send to printed (paper out, a pause) before the job fails. */
    printTimeoutMs: positiveMs.default(60_000),
    /** How long a claimed job waits for a printer that is not ready before it fails. */
    readyTimeoutMs: positiveMs.default(30_000),
    /**
     * The longest one label takes under the head (print, and encode with every RFID retry). After a restart or
     * a dropped line, a format the printer holds counts as never started only once the paused printer's count
     * has held still this long.
     */
    longestLabelMs: positiveMs.default(3000),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.rfid && p.language !== 'zpl')
      ctx.addIssue({ code: 'custom', path: ['rfid'], message: 'RFID needs a ZPL printer' });
    if (p.nfc && p.language !== 'zpl')
      ctx.addIssue({ code: 'custom', path: ['nfc'], message: 'NFC needs a ZPL printer' });
  });
export type PrinterConfig = z.infer<typeof PrinterConfigSchema>;

/** A line supervisor who may sign in at the console (attest, fail, re-print) with a PIN or badge code. */
export const SupervisorConfigSchema = z
  .object({
    /** Who attests: the id goes into the attestation's actor (and the evidence bundle). */
    id: z.string().min(1).max(100),
    name: z.string().min(1).max(100),
    /** scrypt hash of the PIN, made by `dpp-agent supervisor add` (never the PIN itself). */
    pinHash: z.string().regex(PIN_HASH_PATTERN, 'must be a hash made by `dpp-agent supervisor add`'),
  })
  .strict();
export type SupervisorConfig = z.infer<typeof SupervisorConfigSchema>;

export const AgentConfigSchema = z
  .object({
    /** Keys, identity, the outbox database. Relative paths are resolved from the config file's folder. */
    dataDir: z.string().min(1).default('./dpp-agent-data'),
    /** The control plane's base URL; set by `enroll`, overridable here or with DPP_AGENT_URL. */
    controlPlaneUrl: z.url().optional(),
    /** A broker URL to use instead of the one given at enrollment (e.g. through a tunnel). */
    mqttUrl: z.string().optional(),
    /** Turn MQTT off: the agent polls. */
    mqttEnabled: z.boolean().default(true),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    console: z
      .object({
        /** Loopback only: the console has no authentication of its own. */
        host: z.enum(['127.0.0.1', '::1', 'localhost']).default('127.0.0.1'),
        /** 0 picks a free port. */
        port: z.number().int().min(0).max(65535).default(7878),
        enabled: z.boolean().default(true),
      })
      .strict()
      .default({ host: '127.0.0.1', port: 7878, enabled: true }),
    poll: z
      .object({
        /** Claim poll while the broker is unreachable. */
        intervalMs: positiveMs.default(5000),
        /** Slow poll while the broker is up (a missed notice loses nothing). */
        idleIntervalMs: positiveMs.default(60_000),
        /** Wait between status checks of a printer that is not ready. */
        notReadyRetryMs: positiveMs.default(2000),
        /** Status check of an idle printer (for the console and MQTT). */
        statusIntervalMs: positiveMs.default(10_000),
      })
      .strict()
      .default({ intervalMs: 5000, idleIntervalMs: 60_000, notReadyRetryMs: 2000, statusIntervalMs: 10_000 }),
    http: z
      .object({ timeoutMs: positiveMs.default(10_000) })
      .strict()
      .default({ timeoutMs: 10_000 }),
    outbox: z
      .object({
        /** Longest wait between two delivery tries while the control plane is unreachable. */
        maxBackoffMs: positiveMs.default(30_000),
        /** Delivered rows kept for the console before they are pruned. */
        keepDelivered: z.number().int().min(0).default(5000),
      })
      .strict()
      .default({ maxBackoffMs: 30_000, keepDelivered: 5000 }),
    jobs: z
      .object({
        /** Heartbeat period; by default a third of the lease the control plane grants. */
        heartbeatIntervalMs: positiveMs.optional(),
        /** Lease left (at least) when the bytes go to the printer. */
        minLeaseForSendMs: positiveMs.default(5000),
        /** How long a job waits for a supervisor's attestation or a manual scan. */
        humanTimeoutMs: positiveMs.default(30 * 60_000),
        /** Finished jobs kept in the local journal for the console. */
        keepRecent: z.number().int().min(1).default(500),
        /**
         * Jobs one printer works on at once (docs/print-floor.md, "The pipeline"): 3 keeps the printer fed
         * (one label printing, one format queued behind it, one being claimed and rendered); 1 is one job
         * at a time, each claimed after the one before is sealed.
         */
        pipelineDepth: z.number().int().min(1).max(3).default(3),
      })
      .strict()
      .default({ minLeaseForSendMs: 5000, humanTimeoutMs: 30 * 60_000, keepRecent: 500, pipelineDepth: 3 }),
    printers: z.array(PrinterConfigSchema).max(64).default([]),
    /**
     * Supervisors of this device. With at least one, the console's attest, fail and re-print need a
     * supervisor session; without any, they are open to the loopback (development and tests).
     */
    supervisors: z.array(SupervisorConfigSchema).max(100).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.printers.forEach((p, i) => {
      if (seen.has(p.name))
        ctx.addIssue({ code: 'custom', path: ['printers', i, 'name'], message: `duplicate name ${p.name}` });
      seen.add(p.name);
    });
    const ids = new Set<string>();
    c.supervisors?.forEach((s, i) => {
      if (ids.has(s.id))
        ctx.addIssue({ code: 'custom', path: ['supervisors', i, 'id'], message: `duplicate id ${s.id}` });
      ids.add(s.id);
    });
  });

export type AgentConfigInput = z.input<typeof AgentConfigSchema>;
/** The validated configuration, with `dataDir` made absolute by the loader. */
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
