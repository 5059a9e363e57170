/** The public surface: the public passport route, the consumer page /p/{uid} and the GS1 resolver. */
export { publicRoutes, type PublicRouteDeps } from './routes.js';
export { publicCors, isPublicPath } from './cors.js';
