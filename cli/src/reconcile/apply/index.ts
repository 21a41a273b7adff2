export * from './apply.js';
export * from './events.js';
export * from './perform.js';
