import type {
  AdminKey,
  Agent,
  Approval,
  ApprovalDecision,
  ApprovalStatus,
  AuditEntry,
  CreateAdminKey,
  CreateAgent,
  CreateTenant,
  Maintenance,
  PatchAgent,
  PatchTenant,
  Policy,
  PutPolicy,
  PutRoute,
  Role,
  Route,
  Spend,
  StopTrace,
  SystemConfig,
  Tenant,
  TraceRequest,
  TraceStop,
  TraceSummary,
  UsageRow,
} from '@agentgw/gateway/contract';

export { APPROVAL_STATUSES } from '@agentgw/gateway/contract';
export type {
  AdminKey,
  Agent,
  Approval,
  ApprovalDecision,
  ApprovalStatus,
  AuditEntry,
  CreateAdminKey,
  CreateAgent,
  CreateTenant,
  Maintenance,
  PatchAgent,
  PatchTenant,
  Policy,
  PutPolicy,
  PutRoute,
  Role,
  Route,
  Spend,
  StopTrace,
  SystemConfig,
  Tenant,
  TraceRequest,
  TraceStop,
  TraceSummary,
  UsageRow,
};

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export type AgentWithKey = Agent & { api_key: string };
export type AgentWithSpend = Agent & { spend: Spend };
export type AdminKeyWithSecret = AdminKey & { api_key: string };
export type TraceDetail = TraceSummary & { requests: TraceRequest[] };
export interface RotatedKey {
  id: string;
  api_key: string;
  key_prefix: string;
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

export interface TracesQuery extends PageQuery {
  tenant_id?: string;
  agent_id?: string;
  since?: string;
}

export interface AuditQuery extends PageQuery {
  since?: string;
  until?: string;
  /** An actor's id or name. */
  actor?: string;
  kind?: AuditEntry['object']['kind'];
  object_id?: string;
  tenant_id?: string;
}

export interface UsageQuery {
  group_by?: 'agent' | 'tenant' | 'model' | 'tool' | 'day' | 'hour';
  from?: string;
  to?: string;
  tenant_id?: string;
}

export interface ApprovalsQuery extends PageQuery {
  status?: ApprovalStatus;
  tenant_id?: string;
  trace_id?: string;
}
