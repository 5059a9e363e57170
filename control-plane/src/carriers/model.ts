/** Limits and vocabulary of the print loop (api-v2.md, Carrier and print loop; Limits). */

/** Serials per POST /carriers/batch. */
export const BATCH_MAX_COUNT = 10_000;

/** Results per POST /carriers/print-status. */
export const PRINT_STATUS_MAX_RESULTS = 1_000;

/** Failures per print.failed event; a larger report is split into chunks sharing one reportRef. */
export const FAILED_CHUNK_SIZE = 250;

/** Rows per page of an export: each page is its own short query (keyset on the serial). */
export const EXPORT_PAGE_SIZE = 1_000;

/**
 * One past the largest serial: the tenant counter may reach 2^38, so the last serial handed out is
 * 2^38 - 1 = 274877906943, the largest an SGTIN-96 can carry (GS1 EPC TDS §14.5.1, 38-bit serial).
 */
export const SERIAL_LIMIT = 274_877_906_944;

/** The text of a serial the counter hands out: decimal without a leading zero, at most 12 digits (below SERIAL_LIMIT). */
export const COUNTER_FORM = /^[1-9][0-9]{0,11}$/;

/** What `printState` narrows an export to: the reported outcome, or none yet. */
export const PRINT_STATES = ['printed', 'failed', 'pending'] as const;
export type PrintState = (typeof PRINT_STATES)[number];

/** The outcome a report sets (metadata.print.status). */
export type PrintStatus = 'printed' | 'failed';

/** Who wrote an outcome. */
export type OutcomeSource = 'print-status' | 'aidc';

/** The export path carrier.generated and the batch answer carry. */
export function exportPath(productId: string, batchId: string): string {
  return `/api/v2/carriers/export?productId=${encodeURIComponent(productId)}&batchId=${encodeURIComponent(batchId)}`;
}
