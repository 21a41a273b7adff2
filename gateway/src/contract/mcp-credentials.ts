import { z } from 'zod';
import { Timestamp } from './common.js';

/** Headers a credential may not set: they describe the connection or the MCP session, not who calls. */
export const RESERVED_CREDENTIAL_HEADERS = [
  'host',
  'connection',
  'content-length',
  'content-type',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'accept',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
] as const;

/** An HTTP field name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Visible ASCII and spaces (no line breaks: a header cannot be split into two). */
const HeaderValue = z.string().min(1, { message: 'a header value may not be empty' }).max(8192).regex(/^[\x20-\x7e\t]+$/, { message: 'a header value is printable ASCII on one line' });

export const PutMcpCredentials = z
  .strictObject({
    headers: z
      .record(z.string(), HeaderValue)
      .superRefine((h, ctx) => {
        const names = Object.keys(h);
        if (names.length < 1 || names.length > 16) ctx.addIssue({ code: 'custom', message: 'give 1 to 16 headers, such as {"Authorization": "Bearer <token>"}' });
        const seen = new Set<string>();
        for (const n of names) {
          const lower = n.toLowerCase();
          if (!TOKEN.test(n)) ctx.addIssue({ code: 'custom', path: [n], message: "a header name is 1-128 letters, digits or !#$%&'*+.^_`|~- (no spaces or colons)" });
          else if ((RESERVED_CREDENTIAL_HEADERS as readonly string[]).includes(lower)) {
            ctx.addIssue({ code: 'custom', path: [n], message: `a credential may not set ${n}: ${RESERVED_CREDENTIAL_HEADERS.join(', ')} belong to the connection or the MCP session` });
          } else if (seen.has(lower)) ctx.addIssue({ code: 'custom', path: [n], message: 'names a header twice (header names ignore case)' });
          seen.add(lower);
        }
      })
      .describe('Sent to that server alone on every request made for this agent (Authorization replaces the server\'s own). Never returned.'),
  })
  .meta({ id: 'PutMcpCredentials' });
export type PutMcpCredentials = z.infer<typeof PutMcpCredentials>;

/** What the admin interface shows of an agent's credential for a server: that it is set, which headers, when. Never the values. */
export const McpCredentials = z
  .object({
    agent_id: z.string(),
    server: z.string(),
    set: z.boolean(),
    header_names: z.array(z.string()),
    created_at: Timestamp.nullable(),
    updated_at: Timestamp.nullable(),
  })
  .meta({ id: 'McpCredentials' });
export type McpCredentials = z.infer<typeof McpCredentials>;

export const McpCredentialsList = z.object({ data: z.array(McpCredentials) }).meta({ id: 'McpCredentialsList' });
