export * from './change.js';
export * from './diff.js';
export * from './field-changes.js';
export * from './plan-error.js';
export * from './references.js';
