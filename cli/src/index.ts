/** The reconcile engine, the kinds and the admin client, for other packages (e.g. @agentgw/cdktf). */
export {
  AdminClient,
  AdminApiError,
  AdminConnectionError,
  isAdminApiError,
  ignoreNotFound,
  type AdminClientOptions,
} from './admin-client/index.js';
export type * from './admin-client/types.js';

export * from './kinds/index.js';
export { planChanges, reconcile, type PlanOptions, type ReconcileClient } from './reconcile/engine.js';
export { applyChanges, perform, type ApplyClient, type ApplyEvent, type ApplyOptions, type ApplyResult, type Performed } from './reconcile/apply/index.js';
export { dumpLive, type DumpClient } from './reconcile/dump/dump.js';
export {
  diffStates,
  fieldChanges,
  summarise,
  PlanError,
  type Change,
  type ChangeSet,
  type DiffOptions,
  type FieldChange,
  type Op,
  type PlanProblem,
  type PlanProblemSite,
  type Summary,
} from './reconcile/diff/index.js';
export { DEPENDS_ON, kindOrder, orderChanges } from './reconcile/order.js';
export {
  desiredState,
  liveState,
  normaliseAttrs,
  agentIdentity,
  MANAGED_LABEL,
  MANAGED_VALUE,
  type AgentAttrs,
  type LiveObjects,
  type PolicyAttrs,
  type State,
  type StateObject,
  type TenantAttrs,
} from './reconcile/state/index.js';
export {
  loadDeclarativeFiles,
  readDeclarativeFiles,
  parseDeclarative,
  mergeSources,
  mergeDesired,
  readCdktf,
  desiredStateFromCdktf,
  desiredStateFromStackJson,
  CdktfStackError,
  FileError,
  VAR_PREFIX,
  type Desired,
  type DesiredSource,
  type SourceLocation,
  type StackIssue,
} from './reconcile/file/index.js';
export { exportDeclarative } from './reconcile/export/export-state.js';
export { CliError } from './errors.js';
