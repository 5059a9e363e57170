/**
 * Tables of the carriers (print loop) and EPCIS domains (migration 0005). Same conventions as
 * `schema.ts`: uuid text ids, ISO 8601 UTC text timestamps, JSON as text.
 */

/**
 * The serial counter of a tenant. Serials are allocated by one guarded
 * `UPDATE ... SET next_serial = next_serial + :count ... RETURNING`, so concurrent batches never overlap
 * and a serial is never handed out twice, even after its product is deleted.
 */
export interface CarrierSerialCounterTable {
  tenant_id: string;
  /** The next serial to hand out; starts at 1, at most 2^38 (the last SGTIN-96 serial is 2^38 - 1). */
  next_serial: number;
  updated_at: string;
}

/** One POST /carriers/batch: a contiguous range of the tenant's serials for one product. */
export interface CarrierBatchTable {
  id: string;
  tenant_id: string;
  product_id: string;
  gtin: string;
  first_serial: number;
  last_serial: number;
  count: number;
  correlation_id: string | null;
  created_at: string;
}

/**
 * One allocated serial: the serialization record. `print_*` is metadata.print (api-v2.md, Serialization
 * record), replaced wholesale by each report. The public resolver finds a label by (gtin, serial).
 */
export interface CarrierSerialTable {
  tenant_id: string;
  /**
   * Unique within the tenant: decimal without leading zeros when the counter handed it out (then equal to
   * `seq`), any AI (21) serial when it was registered (POST /carriers/batch with `serials`).
   */
  serial: string;
  /** The serial's number from the tenant's counter: the export's order and keyset cursor. */
  seq: number;
  /** `sgtin-96` or `sgtin-198`: the EPC scheme of the serial's tag, chosen when it was allocated (migration 0021). */
  epc_scheme: string;
  product_id: string;
  /** 14 digits, the product's GTIN when the serial was allocated. */
  gtin: string;
  batch_id: string;
  allocated_at: string;
  /** null = pending (nothing reported yet), `printed` or `failed`. */
  print_status: string | null;
  print_reason: string | null;
  print_device_id: string | null;
  print_reported_at: string | null;
  /** `print-status` or `aidc`: who wrote the current outcome. */
  print_source: string | null;
  /** The report (reportRef) that wrote the current outcome. */
  print_report_ref: string | null;
}

/** One POST /epcis/capture (EPCIS 2.0 capture interface: a capture job, here finished at once). */
export interface EpcisCaptureTable {
  id: string;
  tenant_id: string;
  event_count: number;
  stored_count: number;
  duplicate_count: number;
  correlation_id: string | null;
  created_at: string;
  finished_at: string;
}

/** One stored EPCIS 2.0 event (captured, or recorded by the print loop). */
export interface EpcisEventTable {
  id: string;
  tenant_id: string;
  /** The event's eventID (a URI), unique within the tenant. */
  event_id: string;
  event_type: string;
  /** eventTime normalised to UTC with milliseconds: the query order and time filters. */
  event_time: string;
  record_time: string;
  action: string | null;
  /** CBV short name (`commissioning`) or a non-CBV URI. */
  biz_step: string | null;
  disposition: string | null;
  /** `capture` or `print-loop`. */
  source: string;
  capture_id: string | null;
  /** JSON: the contexts of the captured document beyond the EPCIS one, or null. */
  context: string | null;
  /** JSON: the event as stored (with eventID and recordTime). */
  document: string;
}

/** Every EPC an event names (epcList, childEPCs, parentID, input/output lists), for the epc filter. */
export interface EpcisEventEpcTable {
  tenant_id: string;
  epc: string;
  event_row_id: string;
}

export interface CarrierTables {
  carrier_serial_counters: CarrierSerialCounterTable;
  carrier_batches: CarrierBatchTable;
  carrier_serials: CarrierSerialTable;
  epcis_captures: EpcisCaptureTable;
  epcis_events: EpcisEventTable;
  epcis_event_epcs: EpcisEventEpcTable;
}
