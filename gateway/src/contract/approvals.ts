// Approvals (CONTRACT: "Tool rules and approvals"): a tool call an `approve` rule holds until a person decides it.
import { z } from 'zod';
import { ResourceId, Timestamp } from './common.js';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'timed_out', 'abandoned'] as const;
export const ApprovalStatus = z.enum(APPROVAL_STATUSES).describe('What became of the held call.');
export type ApprovalStatus = z.infer<typeof ApprovalStatus>;

export const Approval = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    agent_id: z.string(),
    trace_id: z.string(),
    request_id: z.string().describe('The request whose answer proposed the call (or the /mcp tools/call).'),
    tool: z.string().describe('The name the rules matched: the declared tool, a built-in call by its kind, or `server/tool` on /mcp.'),
    arguments: z.unknown().describe("As the policy's PII rules would forward them: parsed JSON, or the text of a call whose input is not JSON."),
    rule: z.object({ policy_id: z.string(), index: z.number().int() }).nullable().describe('The policy and 1-based rule that held the call.'),
    reason: z.string().nullable(),
    status: ApprovalStatus,
    decided_by: z.string().nullable().describe("Who decided: the admin key's or the signed-in person's name; null until decided by a person."),
    comment: z.string().nullable(),
    created_at: Timestamp,
    decided_at: Timestamp.nullable(),
    expires_at: Timestamp.describe('When the held call times out (approvals.timeout_s after it was held).'),
  })
  .meta({ id: 'Approval' });
export type Approval = z.infer<typeof Approval>;

export const ApprovalsQuery = z.strictObject({
  status: ApprovalStatus.optional(),
  tenant_id: ResourceId.optional().describe("Approvals of this tenant's agents (a tenant-scoped key always sees its own only)."),
  trace_id: z.string().regex(/^[\x20-\x7e]{1,128}$/, { message: 'must be 1-128 printable ASCII characters' }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('Page size, 1-500 (default 50).'),
  cursor: z.string().max(512).optional().describe('The `next_cursor` of the previous page.'),
});
export type ApprovalsQuery = z.infer<typeof ApprovalsQuery>;

export const ApprovalDecision = z
  .strictObject({ comment: z.string().max(2000, { message: 'must be at most 2000 characters' }).optional().describe('Why, for the audit log and the approval.') })
  .meta({ id: 'ApprovalDecision' });
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;
