export { ZebrashRenderer, dpiToDpmm, type LabelRenderer, type LabelSize } from './zpl-renderer.js';
export { printableZpl, type PrintableOptions } from './printable-zpl.js';
export { smudgePng } from './smudge.js';
export { LabelStore } from './label-store.js';
