/** Products: the create contract, lifecycle, versions and events, and the hooks other domains call. */
import type { RouteDef } from '../http/index.js';
import { productHistoryRoutes } from './history-routes.js';
import { productLifecycleRoutes } from './lifecycle-routes.js';
import { productCrudRoutes, type ProductRouteDeps } from './routes.js';

export type { ProductRouteDeps } from './routes.js';
export * from './hooks.js';
export { BATCH_MAX_ITEMS, insertPrepared, type PreparedItem } from './create.js';
export { batchError } from './batch.js';
export {
  DEFAULT_COMPANY_PREFIX_LENGTH,
  GRANULARITIES,
  LIFECYCLE_STAGES,
  STAGE_TRANSITIONS,
  productStatus,
  toProductView,
  type Granularity,
  type ProductView,
} from './model.js';
export { ProductCreateSchema, ProductUpdateSchema } from './input.js';
export { ProductSchema } from './api-schemas.js';
export { publishedPassportRetained, updateProduct } from './update.js';
export { getProduct } from './queries.js';
export { prepareCreate, type Prepared, type WriteContext } from './rules.js';

/** Every product operation; /products/categories is mounted before /products/{id}. */
export function productRoutes(deps: ProductRouteDeps): RouteDef[] {
  return [...productHistoryRoutes(deps), ...productCrudRoutes(deps), ...productLifecycleRoutes(deps)];
}
