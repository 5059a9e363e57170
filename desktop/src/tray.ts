/**
 * The tray icon's look: from the printers' states (and the prints waiting for a supervisor) to one level,
 * a tooltip and a round icon drawn as a raw BGRA bitmap (`nativeImage.createFromBitmap`), so the app
 * ships no image files for it. Pure functions, tested without Electron.
 */
import type { PrinterState } from '@dpp/shared';

export type TrayLevel = 'ok' | 'busy' | 'attention' | 'fault';

export interface TrayPrinter {
  name: string;
  state: PrinterState;
}

export interface TrayView {
  level: TrayLevel;
  /** The worst printer state, or null without printers. */
  worst: PrinterState | null;
  /** One line for the tray's tooltip (Windows cuts tooltips at 127 characters). */
  tooltip: string;
}

/** Worst first: what needs a person at the printer, then what needs a supervisor, then work. */
const RANK: Record<PrinterState, number> = {
  error: 7,
  offline: 6,
  paper_out: 5,
  head_open: 4,
  ribbon_out: 3,
  paused: 2,
  printing: 1,
  ready: 0,
};

const TEXT: Record<PrinterState, string> = {
  error: 'error',
  offline: 'offline',
  paper_out: 'paper out',
  head_open: 'head open',
  ribbon_out: 'ribbon out',
  paused: 'paused',
  printing: 'printing',
  ready: 'ready',
};

const LEVEL_OF: Record<PrinterState, TrayLevel> = {
  error: 'fault',
  offline: 'fault',
  paper_out: 'fault',
  head_open: 'fault',
  ribbon_out: 'fault',
  paused: 'attention',
  printing: 'busy',
  ready: 'ok',
};

/** RGB of each level's dot: green, blue, amber, red. */
export const TRAY_COLORS: Record<TrayLevel, readonly [number, number, number]> = {
  ok: [0x1f, 0x9d, 0x55],
  busy: [0x1b, 0x6f, 0xd1],
  attention: [0xe0, 0xa1, 0x00],
  fault: [0xd0, 0x31, 0x2d],
};

const MAX_TOOLTIP = 127;

export function trayView(printers: readonly TrayPrinter[], waitingForSupervisor = 0): TrayView {
  const worst = printers.reduce<PrinterState | null>(
    (w, p) => (w === null || RANK[p.state] > RANK[w] ? p.state : w),
    null,
  );
  let level: TrayLevel = worst ? LEVEL_OF[worst] : 'ok';
  if (waitingForSupervisor > 0 && (level === 'ok' || level === 'busy')) level = 'attention';
  const parts = printers.length
    ? [...printers].sort((a, b) => RANK[b.state] - RANK[a.state]).map((p) => `${p.name}: ${TEXT[p.state]}`)
    : ['no printers configured'];
  if (waitingForSupervisor > 0)
    parts.unshift(`${waitingForSupervisor} print${waitingForSupervisor === 1 ? '' : 's'} to attest`);
  let tooltip = `DPP print floor - ${parts.join(', ')}`;
  if (tooltip.length > MAX_TOOLTIP) tooltip = `${tooltip.slice(0, MAX_TOOLTIP - 1)}…`;
  return { level, worst, tooltip };
}

/**
 * A filled dot of the level's colour on a transparent square, anti-aliased at the edge: `size` x `size`
 * pixels, 4 bytes each in BGRA order (what `nativeImage.createFromBitmap` takes).
 */
export function trayIconBitmap(level: TrayLevel, size: number): Buffer {
  if (!Number.isInteger(size) || size < 8 || size > 512) throw new RangeError('size: 8 to 512 pixels');
  const [r, g, b] = TRAY_COLORS[level];
  const out = Buffer.alloc(size * size * 4);
  const c = size / 2;
  const radius = size / 2 - 1;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const d = Math.hypot(x + 0.5 - c, y + 0.5 - c);
      const alpha = Math.max(0, Math.min(1, radius + 0.5 - d));
      const i = (y * size + x) * 4;
      // Premultiplied, as Skia bitmaps are.
      out[i] = Math.round(b * alpha);
      out[i + 1] = Math.round(g * alpha);
      out[i + 2] = Math.round(r * alpha);
      out[i + 3] = Math.round(255 * alpha);
    }
  }
  return out;
}
