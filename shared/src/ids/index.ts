export { uuidv7 } from './uuidv7.js';
