/** The category schema registry: versioned, point-in-time schemas of product extensions. */
export * from './define.js';
export * from './field-schema.js';
export * from './import-template.js';
export * from './registry.js';
export { schemaRoutes } from './routes.js';
export { WEEE_CATEGORIES } from './catalogue/electronics.js';
