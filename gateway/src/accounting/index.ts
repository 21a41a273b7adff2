export * from './budget-window.js';
export * from './cost.js';
export * from './prices.js';
export * from './tokens.js';
export * from './counters/index.js';
