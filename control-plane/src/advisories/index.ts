/** Security advisories: what a workspace publishes, and its public CSAF feed. */
export { advisoryRoutes, type AdvisoryRouteDeps } from './routes.js';
export {
  REMEDIATION_CATEGORIES,
  SEVERITIES,
  allAdvisories,
  listAdvisories,
  publishAdvisory,
  withdrawAdvisory,
  type Advisory,
  type AdvisoryContent,
} from './advisories.js';
export { documentUrl, feedUrl } from './csaf.js';
export { AdvisoryChanges, AdvisoryInput, WithdrawBody } from './schemas.js';
export { getAdvisory, updateAdvisory } from './advisories.js';
