import { z } from 'zod';
import { route, type RouteDef, UuidParam, dataEnvelope } from '../http/index.js';
import { ProductSchema } from './api-schemas.js';
import { noNul } from './input.js';
import { transitionProduct, voidProduct } from './lifecycle.js';
import { LIFECYCLE_STAGES } from './model.js';
import { edit, writeContext, type ProductRouteDeps } from './routes.js';

const Reason = z
  .string()
  .max(1000, 'must be at most 1000 characters')
  .refine(noNul, 'must not contain NUL characters');

const TransitionBody = z
  .object({
    stage: z.enum(LIFECYCLE_STAGES, { error: `must be one of ${LIFECYCLE_STAGES.join(', ')}` }).meta({
      description: 'The stage to move to: validated (from draft), then ready_for_dpp (from validated)',
    }),
    reason: Reason.optional().meta({ description: 'Recorded on the version, the event and the audit log' }),
  })
  .strict()
  .meta({ id: 'ProductTransition' });

const VoidBody = z
  .object({
    reason: Reason.refine((v) => v.trim().length > 0, 'must not be blank').meta({
      description: 'Why the item is voided; recorded and audited',
    }),
  })
  .strict()
  .meta({ id: 'ProductVoid' });

/** POST /products/{id}/lifecycle/transition and POST /products/{id}/void. */
export function productLifecycleRoutes(deps: ProductRouteDeps): RouteDef[] {
  const { db } = deps;
  return [
    route({
      method: 'post',
      path: '/api/v2/products/{id}/lifecycle/transition',
      operationId: 'transitionProduct',
      summary: 'Move a product through its lifecycle: draft -> validated -> ready_for_dpp',
      description:
        'Both moves are needed before passport generation. Any other move (skipping a stage, going back, ' +
        'moving a voided product) is 422 INVALID_STATE_TRANSITION with details { from, to, allowed }. ' +
        'Writes a version and emits product.updated with data.transition { from, to, reason }.',
      tags: ['Products'],
      auth: edit,
      idempotency: 'recommended',
      request: { params: UuidParam, body: TransitionBody },
      responses: {
        200: { description: 'The product in its new stage', schema: dataEnvelope(ProductSchema) },
      },
      errors: ['INVALID_STATE_TRANSITION'],
      handler: async ({ principal, params, body, correlationId }) => ({
        status: 200,
        body: {
          data: await transitionProduct(
            db,
            writeContext(deps, principal, correlationId),
            params.id,
            body.stage,
            body.reason ?? null,
          ),
        },
      }),
    }),
    route({
      method: 'post',
      path: '/api/v2/products/{id}/void',
      operationId: 'voidProduct',
      summary: 'Void a product: a terminal state for the item',
      description:
        'The reason is required, stored, versioned and audited; emits product.updated. A voided product ' +
        'cannot change or move any more. Voiding it again is a plain 409 (no code), details.reason ' +
        'already_voided.',
      tags: ['Products'],
      auth: edit,
      idempotency: 'recommended',
      request: { params: UuidParam, body: VoidBody },
      responses: { 200: { description: 'The voided product', schema: dataEnvelope(ProductSchema) } },
      handler: async ({ principal, params, body, correlationId }) => ({
        status: 200,
        body: {
          data: await voidProduct(db, writeContext(deps, principal, correlationId), params.id, body.reason),
        },
      }),
    }),
  ];
}
