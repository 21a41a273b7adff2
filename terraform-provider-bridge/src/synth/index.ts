// The CLI reads synthesized stacks itself (agentgw plan|apply --cdktf); this package re-exports that reader.
export { desiredStateFromCdktf, desiredStateFromStackJson, CdktfStackError, type StackIssue } from '@agentgw/cli';
