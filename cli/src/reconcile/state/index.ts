export * from './types.js';
export * from './normalise.js';
export * from './ownership.js';
export * from './identity.js';
