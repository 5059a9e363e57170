import { z } from 'zod';

/** Control plane -> device: a job for the device's tenant is queued; claim over HTTP. */
export const WorkNoticeSchema = z.object({
  type: z.literal('work_available'),
  tenantId: z.string(),
  jobRef: z.string().optional(),
  queuedAt: z.iso.datetime(),
});
export type WorkNotice = z.infer<typeof WorkNoticeSchema>;

/** Device presence; the agent sets an `offline` last will when it connects. */
export const PresenceSchema = z.object({
  status: z.enum(['online', 'offline']),
  at: z.iso.datetime(),
  agentVersion: z.string().optional(),
  printers: z.array(z.string()).optional(),
});
export type Presence = z.infer<typeof PresenceSchema>;

export const PRINTER_STATES = [
  'ready',
  'printing',
  'paper_out',
  'ribbon_out',
  'head_open',
  'paused',
  'offline',
  'error',
] as const;
export type PrinterState = (typeof PRINTER_STATES)[number];

const WaitCountSchema = z.object({ labels: z.number().int().min(0), ms: z.number().min(0) });

/** One printer's status as the device last saw it (retained). */
export const PrinterStatusMessageSchema = z.object({
  printer: z.string(),
  state: z.enum(PRINTER_STATES),
  detail: z.string().optional(),
  jobRef: z.string().optional(),
  at: z.iso.datetime(),
  /**
   * Since the agent started: labels before which the printer stood empty with its next label claimed on the device,
   * and for how long in all; on the agent, and on a scan of the label ahead (agent/README.md, "The line's figures").
   */
  waits: z.object({ agent: WaitCountSchema, scan: WaitCountSchema }).optional(),
});
export type PrinterStatusMessage = z.infer<typeof PrinterStatusMessageSchema>;

/** The wire contract: topic suffix -> direction and payload schema. */
export const MQTT_CONTRACT = {
  'notices/work': { direction: 'control-plane -> device', retained: false, schema: WorkNoticeSchema },
  presence: { direction: 'device -> subscribers', retained: true, schema: PresenceSchema },
  'printers/{printer}/status': {
    direction: 'device -> subscribers',
    retained: true,
    schema: PrinterStatusMessageSchema,
  },
} as const;
