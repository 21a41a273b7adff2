// Wire types, derived from the gateway's contract (type-only imports: nothing of zod reaches the bundle).
import type {
  AdminKey,
  Agent,
  Approval,
  Policy,
  Spend,
  SystemConfig,
  Tenant,
  TenantWithSpend,
  TraceRequest,
  TraceSummary,
  UsageRow,
} from '@agentgw/gateway/contract';

export type { Agent, Approval, Policy, Spend, SystemConfig, Tenant, TenantWithSpend, TraceSummary };

/** GET /api/agents/{id}. */
export type AgentWithSpend = Agent & { spend: Spend };

/** GET /api/me. */
export type Me = Pick<AdminKey, 'id' | 'name' | 'role' | 'tenant_id'>;

/** A trace step; `tool` (MCP steps) and `running` (a step in flight) are in CONTRACT, read here when the server sends them. */
export type Step = Omit<TraceRequest, 'status'> & { status: TraceRequest['status'] | 'running'; tool?: string | null };

export type TraceDetail = TraceSummary & { requests: Step[] };

/** GET /api/usage rows; `errors` is in CONTRACT, read when the server sends it. */
export type UsagePoint = UsageRow & { errors?: number };

/** Policies as CONTRACT describes them, tool rules included when the server has them. */
export type PolicyView = Policy & {
  allowed_tools?: string[] | null;
  rules: Policy['rules'] & { max_tool_calls_per_trace?: number | null };
};

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface RotatedKey {
  id: string;
  api_key: string;
  key_prefix: string;
}

/** GET /api/mcp/servers (CONTRACT "MCP"; read loosely: a gateway without MCP answers 404). */
export interface McpServer {
  name: string;
  transport?: string;
  /** idle, connecting, up or down. */
  status?: string;
  error?: string | null;
  tools?: string[];
  prices?: Record<string, number>;
}

