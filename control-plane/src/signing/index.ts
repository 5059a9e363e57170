export * from './keyring.js';
export * from './routes.js';
export { publicKeyOfJwk, verifyEdDsaCompact, type VerifiedCompactJws } from './compact-jws.js';
