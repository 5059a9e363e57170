import type { EpcisEvent } from './schemas.js';

/**
 * The EPCIS 2.0 commissioning ObjectEvent of labels confirmed printed (CBV 2.0 §7.1.5 commissioning:
 * "process of associating an instance-level identifier with a specific object"; action ADD brings the
 * EPCs into existence, disposition active). One event names every EPC of one report.
 *
 * @example
 * commissioningEvent({ epcs: ['urn:epc:id:sgtin:0614141.812345.6789'], at: '2026-01-01T10:00:00.000Z' });
 */
export function commissioningEvent(input: {
  epcs: readonly string[];
  at: string;
  /** Where the proof of the labels is (EPCIS 2.0 certificationInfo): a sealed print job's label proof. */
  certificationInfo?: string | undefined;
}): EpcisEvent {
  return {
    type: 'ObjectEvent',
    eventTime: input.at,
    eventTimeZoneOffset: '+00:00',
    epcList: [...input.epcs],
    action: 'ADD',
    bizStep: 'commissioning',
    disposition: 'active',
    ...(input.certificationInfo ? { certificationInfo: input.certificationInfo } : {}),
  };
}
