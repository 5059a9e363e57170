/** Scanner line protocol: writers and parsers for both sides. */
export * from './protocol.js';
export * from './line-parser.js';
