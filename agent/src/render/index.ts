export * from './template.js';
export * from './qr.js';
export * from './zpl.js';
export * from './pdf.js';
export * from './manifest.js';
export * from './render-label.js';
export * from './symbols.js';
export * from './layout.js';
