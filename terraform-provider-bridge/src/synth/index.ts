export { desiredStateFromCdktf, desiredStateFromStackJson } from './desired-state.js';
export { CdktfStackError, type StackIssue } from './stack-json.js';
