/** The printer's condition as one word for MQTT and the console (`PrinterStatusMessage.state`). */
import type { PrinterState, PrinterStatus } from '@dpp/shared';

export function printerStateOf(status: PrinterStatus | null, busy = false): PrinterState {
  if (!status) return busy ? 'printing' : 'ready';
  if (status.paperOut) return 'paper_out';
  if (status.ribbonOut) return 'ribbon_out';
  if (status.headOpen) return 'head_open';
  if (status.paused) return 'paused';
  if (!status.ready) return 'error';
  return busy ? 'printing' : 'ready';
}

/** Why a printer must not be sent a label, or null when it may. */
export function notReadyReason(status: PrinterStatus | null): string | null {
  if (!status || status.ready) return null;
  return status.errors.join(', ') || 'not ready';
}
