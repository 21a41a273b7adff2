import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentgwError, Approval, ApprovalDecision, ApprovalsQuery, ErrorBody, page } from '../contract/index.js';
import type { Services } from '../services.js';
import { audited } from './audit-trail.js';
import { listScope, requireTenant, requireWrite } from './principal.js';

const ApprovalParams = z.strictObject({ id: z.string().min(1).max(128) });

const notFound = (id: string) => new AgentgwError('approval_not_found', `No approval ${id}: check the id (GET /api/approvals lists them).`);

function alreadyDecided(a: Approval, verb: 'approve' | 'deny'): AgentgwError {
  if (a.status === 'timed_out') {
    return new AgentgwError(
      'approval_decided',
      `Approval ${a.id} timed out and its call was refused: it can still be approved (the same call then passes once in its trace within 15 minutes), not denied.`,
    );
  }
  const by = a.decided_by ? ` by ${a.decided_by}` : '';
  return new AgentgwError('approval_decided', `Approval ${a.id} is already ${a.status}${by}${a.decided_at ? ` at ${a.decided_at}` : ''}: it cannot be ${verb === 'approve' ? 'approved' : 'denied'} now.`);
}

/**
 * GET /approvals: the calls held for a person, newest first (every role reads; a tenant-scoped key its tenant's).
 * POST /approvals/{id}/approve|deny: an admin, or a tenant_admin of the approval's tenant, decides; the decision and its
 * audit entry are written in one transaction, then the node holding the call hears of it (Redis, or its poll).
 */
export function approvalRoutes(app: FastifyInstance, s: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

  r.get('/approvals', { schema: { tags: ['approvals'], querystring: ApprovalsQuery, response: { 200: page(Approval), ...errors } } }, async (req) => {
    return s.store.listApprovals({ ...req.query, tenant_id: listScope(req.principal, req.query.tenant_id) });
  });

  for (const verb of ['approve', 'deny'] as const) {
    r.post(
      `/approvals/:id/${verb}`,
      {
        schema: {
          tags: ['approvals'],
          params: ApprovalParams,
          body: ApprovalDecision.nullish(),
          response: { 200: Approval, ...errors, 409: ErrorBody },
        },
      },
      async (req) => {
        const p = req.principal;
        const id = req.params.id;
        const found = await s.store.getApproval(id);
        // Another tenant's approval is forbidden, as every other object of another tenant is.
        if (!found) throw notFound(id);
        requireTenant(p, found.tenant_id);
        requireWrite(p);
        const at = new Date().toISOString();
        const decided = await audited(s, req, async (tx) => {
          const { approval, decided } = await tx.decideApproval(id, verb === 'approve' ? 'approved' : 'denied', p.name, req.body?.comment ?? null, at);
          if (!approval) throw notFound(id);
          if (!decided) throw alreadyDecided(approval, verb);
          return [approval, { action: `approval.${verb}`, object: { kind: 'approval', id }, tenant_id: approval.tenant_id, before: found, after: approval }];
        });
        s.approvals.announce(decided);
        return decided;
      },
    );
  }
}
