/** dpp-verify as a library: the CLI's function, and the pieces a program may want on their own. */
export { main, nodeIo, type Io } from './main.js';
export { runVerify } from './verify.js';
export { parseArgs, USAGE, type Options } from './args.js';
export { VerifyError, type VerifyErrorCode } from './errors.js';
export { formatReport, type Report, type SealReport } from './report.js';
export { LINKS, type LinkName, type LinkResult, type LinkStatus } from './result.js';
export { leafHash, nodeHash, verifyConsistency, verifyInclusion } from './merkle.js';
export { decodeSgtin96, sgtinPureIdentityUri } from './sgtin.js';
export { parseDigitalLink } from './digital-link.js';
