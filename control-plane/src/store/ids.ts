/**
 * Row ids that sort by creation time (UUIDv7, see `@dpp/shared`'s `uuidv7`): the append-only tables' rows land
 * at the right edge of their primary-key B-tree. For ids that must not reveal when they were made (API keys,
 * tokens, attempt ids), use `randomUUID`.
 */
export { uuidv7 } from '@dpp/shared';
