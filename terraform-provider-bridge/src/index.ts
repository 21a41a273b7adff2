export * from './constructs/index.js';
export { desiredStateFromCdktf, desiredStateFromStackJson, CdktfStackError, type StackIssue } from './synth/index.js';
