import { z } from 'zod';

export const ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const ID_RULE = 'lowercase letters, digits, "_" or "-", starting with a letter or digit, at most 64 characters';

/** Tenant and policy ids. */
export const ResourceId = z
  .string()
  .regex(ID_PATTERN, { message: `must be ${ID_RULE}` })
  .describe(`Identifier: ${ID_RULE}.`);

export const AgentName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, {
    message: 'must be letters, digits, "_", "." or "-", starting with a letter or digit, at most 64 characters',
  })
  .describe('Agent name, unique within its tenant.');

export const LABEL_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.\/-]{0,62}$/;
export const Labels = z
  .record(
    z.string().regex(LABEL_KEY_PATTERN, { message: 'label keys are letters, digits, "_", ".", "/" or "-", at most 63 characters' }),
    z.string().max(256, { message: 'label values are at most 256 characters' }),
  )
  .refine((l) => Object.keys(l).length <= 64, { message: 'at most 64 labels' })
  .describe('Free labels (string -> string). `managed_by: agentgw` marks objects owned by the declarative file.');
export type Labels = z.infer<typeof Labels>;

export const Timestamp = z.string().describe('RFC 3339 UTC timestamp.');

export const Usd = z.number().finite().min(0, { message: 'must be >= 0' }).max(1e9, { message: 'must be at most 1e9' });

export const PaginationQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(50).describe('Page size, 1-500 (default 50).'),
  cursor: z.string().max(512).optional().describe('The `next_cursor` of the previous page.'),
});

export function page<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), next_cursor: z.string().nullable() });
}
