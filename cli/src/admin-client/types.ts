import type {
  AdminKey,
  Agent,
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

export type {
  AdminKey,
  Agent,
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

/** What became of a call held for a person (CONTRACT "Tool rules and approvals"). */
export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'timed_out', 'abandoned'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** A tool call held for a person: GET /approvals lists them, POST /approvals/{id}/approve|deny decides one. */
export interface Approval {
  id: string;
  tenant_id: string;
  agent_id: string;
  trace_id: string;
  request_id: string;
  tool: string;
  /** As the policy's PII rules would forward them: parsed JSON, or the text of a call whose input is not JSON. */
  arguments: unknown;
  /** The policy and 1-based rule that held the call. */
  rule: { policy_id: string; index: number } | null;
  reason: string | null;
  status: ApprovalStatus;
  /** Who decided: the admin key's or the person's name. */
  decided_by: string | null;
  comment: string | null;
  created_at: string;
  decided_at: string | null;
  expires_at: string;
}

export interface ApprovalsQuery extends PageQuery {
  status?: ApprovalStatus;
  tenant_id?: string;
  trace_id?: string;
}

export interface ApprovalDecision {
  comment?: string;
}
