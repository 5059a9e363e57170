/** Compliance: regulation packs (data), selection of obligations, and the sector projectors' evaluations. */
export { complianceRoutes, type ComplianceRouteDeps } from './routes.js';
export { PackError, loadPackFiles, shippedPacks, SHIPPED_PACKS_DIR } from './packs.js';
export { PackVersionSchema, packProblem, type PackVersion } from './pack-format.js';
