import type { Principal } from './principal.js';

declare global {
  namespace Express {
    interface Request {
      correlationId: string;
      principal?: Principal;
      /** The matched route's OpenAPI path, for metrics and idempotency scoping. */
      routePath?: string;
    }
  }
}

export {};
