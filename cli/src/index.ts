/** The reconcile engine and the admin client, for other packages (e.g. @agentgw/cdktf). */
export {
  AdminClient,
  AdminApiError,
  AdminConnectionError,
  isAdminApiError,
  ignoreNotFound,
  type AdminClientOptions,
} from './admin-client/index.js';
export type * from './admin-client/types.js';

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
  type Summary,
} from './reconcile/diff/index.js';
export { DEPENDS_ON, kindOrder, orderChanges } from './reconcile/order.js';
export {
  desiredState,
  liveState,
  agentIdentity,
  MANAGED_LABEL,
  MANAGED_VALUE,
  type AgentAttrs,
  type Kind,
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
  readCdktf,
  FileError,
  VAR_PREFIX,
  type DesiredSource,
  type SourceLocation,
} from './reconcile/file/index.js';
export { exportDeclarative } from './reconcile/export/export-state.js';
export { CliError } from './errors.js';
