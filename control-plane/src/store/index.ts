export * from './database.js';
export type * from './schema.js';
export type * from './schema-devices.js';
export type * from './schema-aidc.js';
export type * from './schema-carriers.js';
export type * from './schema-passports.js';
export * from './dialect.js';
export * from './ids.js';
export * from './secrets.js';
