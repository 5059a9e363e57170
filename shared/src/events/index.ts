export * from './catalogue.js';
export * from './typed-events.js';
