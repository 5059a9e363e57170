/** The lease queue every background queue is built on (see lease-queue.ts). */
export {
  LeaseLost,
  claim,
  claimChosen,
  claimChosenStatement,
  claimStatement,
  chooseDue,
  expiredLeases,
  fail,
  finish,
  release,
  renew,
  retryDelay,
  type ClaimOptions,
  type Lease,
  type LeaseColumns,
  type QueueTable,
} from './lease-queue.js';
