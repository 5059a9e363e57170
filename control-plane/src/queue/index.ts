/** The lease queue every background queue is built on (see lease-queue.ts). */
export {
  LeaseLost,
  claim,
  claimChosen,
  claimInTurnsStatement,
  chooseDue,
  expiredLeases,
  fail,
  finish,
  release,
  renew,
  retryDelay,
  type ClaimOptions,
  type ClaimTurn,
  type Lease,
  type LeaseColumns,
  type QueueTable,
} from './lease-queue.js';
