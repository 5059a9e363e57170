/** The public surface: the public passport route, the consumer page /p/{uid} and the GS1 resolver. */
export { publicRoutes, type PublicRouteDeps } from './routes.js';
export { publicCors, isPublicPath } from './cors.js';
export { resolveKey, type KeyResolution } from './lookup.js';
export { parseKey } from './resolver.js';
export { PublicAnswerCache } from './cache.js';
export { publicFastPath, type FastPathDeps } from './fast-path.js';
export { CacheInvalidation, INVALIDATION_CHANNEL } from './invalidation.js';
