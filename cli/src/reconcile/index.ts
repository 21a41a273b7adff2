export * from './engine.js';
export * from './order.js';
export * from './state/index.js';
export * from './diff/index.js';
export * from './dump/dump.js';
export * from './apply/index.js';
export * from './file/index.js';
export * from './export/export-state.js';
