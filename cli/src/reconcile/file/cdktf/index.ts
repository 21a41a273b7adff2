export { desiredStateFromCdktf, desiredStateFromStackJson, readStackState, stackState, type StackState } from './desired-state.js';
export { CdktfStackError, type StackIssue, type StackJson } from './stack-json.js';
