import { z } from 'zod';
import { ResourceId, Timestamp } from './common.js';

/** The header the CLI's `apply` sends on every call of one run: the plan's digest, kept as each entry's change_id. */
export const CHANGE_ID_HEADER = 'x-agentgw-change-id';

export const ChangeId = z
  .string()
  .regex(/^[\x21-\x7e]{1,128}$/, { message: `${CHANGE_ID_HEADER} must be 1-128 printable ASCII characters without spaces` })
  .describe('What the write belongs to (the CLI sends the digest of the plan it applies).');

export const AUDIT_ACTOR_KINDS = ['admin_key', 'oidc'] as const;
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

/** What an entry is about. A write of a new kind of object adds its kind here. */
export const AUDIT_OBJECT_KINDS = ['tenant', 'agent', 'policy', 'admin_key', 'maintenance', 'trace', 'route', 'approval', 'mcp_credentials', 'mcp_tool'] as const;
export const AuditObjectKind = z.enum(AUDIT_OBJECT_KINDS);
export type AuditObjectKind = z.infer<typeof AuditObjectKind>;

/** The object as it was before the write and as it is after (null where it did not or no longer exists), secrets left out. */
const AuditState = z.record(z.string(), z.unknown()).nullable();

export const AuditEntry = z
  .object({
    id: z.string(),
    at: Timestamp,
    actor: z
      .object({ kind: z.enum(AUDIT_ACTOR_KINDS), id: z.string(), name: z.string() })
      .describe('Who wrote: an admin key (its id and name) or a person signed in through OpenID Connect (subject and name).'),
    action: z.string().describe('`<kind>.<verb>`: tenant.create, agent.rotate_key, agent.suspend, trace.stop, maintenance.update, ...'),
    object: z.object({ kind: AuditObjectKind, id: z.string() }),
    before: AuditState,
    after: AuditState,
    request_id: z.string().describe('The x-request-id of the write.'),
    change_id: z.string().nullable().describe(`The ${CHANGE_ID_HEADER} header of the write, if it had one.`),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof AuditEntry>;

const time = (what: string) =>
  z.iso.datetime({ offset: true, message: 'must be an RFC 3339 timestamp such as 2026-01-31T00:00:00Z' }).optional().describe(what);

export const AuditQuery = z.strictObject({
  since: time('Entries at or after this time.'),
  until: time('Entries before this time.'),
  actor: z.string().min(1).max(200).optional().describe('Entries of this actor: its id or its name.'),
  kind: AuditObjectKind.optional().describe('Entries about objects of this kind.'),
  object_id: z.string().min(1).max(256).optional().describe('Entries about the object with this id.'),
  tenant_id: ResourceId.optional().describe("Entries about this tenant's objects (a tenant-scoped key always sees its own only)."),
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('Page size, 1-500 (default 50).'),
  cursor: z.string().max(512).optional().describe('The `next_cursor` of the previous page.'),
});
export type AuditQuery = z.infer<typeof AuditQuery>;
