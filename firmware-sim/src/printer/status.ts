/**
 * What the printer answers to `~HS` and `~HQES`, from its state. The guide gives no `~HS` or
 * `~HQES` signature for the RFID error mode entered by `^RS` error handling `E`; the simulator
 * reports it like a pause (pause flag set, the format held in the buffer), which stops printing as
 * the error mode does. The `~HQES` "Paused" bit is KR403-only in the guide, so it stays clear.
 */
import {
  hqesStatusOf,
  type HostStatus,
  type HostStatusSerialSettings,
  type HqesErrorName,
  type HqesStatus,
} from '@dpp/shared';

export interface PrinterState {
  paperOut: boolean;
  ribbonOut: boolean;
  headOpen: boolean;
  paused: boolean;
  rfidErrorMode: boolean;
  formatsInBuffer: number;
  partialFormat: boolean;
  labelLengthDots: number;
  serial: HostStatusSerialSettings;
}

export function hostStatusOf(s: PrinterState): HostStatus {
  return {
    serial: s.serial,
    paperOut: s.paperOut,
    paused: s.paused || s.rfidErrorMode,
    labelLengthDots: s.labelLengthDots,
    formatsInBuffer: s.formatsInBuffer,
    bufferFull: false,
    diagnosticMode: false,
    partialFormat: s.partialFormat,
    corruptRam: false,
    underTemperature: false,
    overTemperature: false,
    functionSettings: {
      continuousMedia: false,
      sensorProfile: false,
      communicationsDiagnostics: false,
      thermalTransfer: true,
    },
    headUp: s.headOpen,
    ribbonOut: s.ribbonOut,
    thermalTransferMode: true,
    printMode: '2',
    printWidthMode: '6',
    labelWaiting: false,
    labelsRemaining: s.formatsInBuffer,
    graphicsStored: 0,
    password: '1234',
    staticRam: false,
  };
}

export function hqesOf(s: PrinterState): HqesStatus {
  const errors: HqesErrorName[] = [];
  if (s.paperOut) errors.push('mediaOut');
  if (s.ribbonOut) errors.push('ribbonOut');
  if (s.headOpen) errors.push('headOpen');
  return hqesStatusOf(errors);
}
