export * from './faults.js';
export { defaultWrongContent } from './wrong-content.js';
