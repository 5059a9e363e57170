/** The transparency log of seal receipts and the public proof of each label (docs/label-proof.md). */
export * from './log.js';
export * from './proof.js';
export * from './routes.js';
export { appendNodes, leafHash, memoryReader, treeRoot, verifyConsistency, verifyInclusion } from './tree.js';
