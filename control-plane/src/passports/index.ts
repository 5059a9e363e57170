/**
 * Passports: generation (the six-stage pipeline and its worker), publication and the version hash chain,
 * Digital Link registration, registry broadcast, lifecycle commands, validations and readyToPrint.
 */
export { passportRoutes, type PassportRouteDeps } from './routes.js';
export {
  GenerationWorker,
  type GenerationWorkerOptions,
  type GenerationRunResult,
} from './generation-worker.js';
export { isReadyToPrint } from './readiness.js';
export { currentMarketStatus, MARKET_STATUSES, type MarketStatus } from './market-status.js';
export { localSigner, tenantIssuerKey, type CredentialSigner, type IssuerKey } from './issuer.js';
export { publicStatus, isServed, sectionTier, type PublicStatus, type GoneReason } from './model.js';
export { merkleRoot, sectionProof, verifySectionProof, MERKLE_ALGORITHM, type MerkleStep } from './merkle.js';
export { versionHash, contentHash, HASH_ALGORITHM } from './chain.js';
export { parseSections, parseTiers } from './queries.js';
