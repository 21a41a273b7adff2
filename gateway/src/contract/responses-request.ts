import { z } from 'zod';

// OpenAI Responses requests (POST /v1/responses). Objects are loose: a field agentgw does not know yet goes on to an OpenAI
// upstream as sent, and translation names it in a 400 when it cannot carry it. Only what agentgw itself reads is typed.

const Text = z.string().max(50_000_000);

/** An input item: a message (`type` may be left out, as the SDKs do for `{role, content}`) or any other typed item. */
const InputItem = z.looseObject({
  type: z.string().min(1).max(128).optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']).optional(),
});

// Tool types are OpenAI's identifiers (function, custom, web_search_2025_08_26, ...); dropped ones are named in a header.
const Tool = z.looseObject({ type: z.string().regex(/^[a-z][a-z0-9_.-]{0,63}$/, 'must be a tool type such as "function", "custom" or "web_search"') });

export const RESPONSE_ID = /^resp_[A-Za-z0-9_-]{1,200}$/;

const inputOf = <T extends z.ZodType>(item: T) => z.union([Text, z.array(item).max(100_000)]).optional();
const toolsOf = <T extends z.ZodType>(item: T) => z.array(item).max(1_000).optional();

export const ResponsesRequest = z.looseObject({
  model: z.string().min(1).max(256),
  input: inputOf(InputItem),
  instructions: Text.nullable().optional(),
  tools: toolsOf(Tool),
  stream: z.boolean().nullable().optional(),
  store: z.boolean().nullable().optional(),
  previous_response_id: z.string().regex(RESPONSE_ID, 'must be the id of a stored response (resp_...)').nullable().optional(),
  max_output_tokens: z.number().int().min(1).max(10_000_000).nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
  include: z.array(z.string().max(128)).max(100).nullable().optional(),
  reasoning: z.looseObject({ effort: z.string().max(32).nullable().optional() }).nullable().optional(),
  text: z.looseObject({ format: z.looseObject({ type: z.string().max(64) }).optional() }).nullable().optional(),
});
export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

/** ResponsesRequest checked in parts (see checkBody): a body passes both exactly when it passes ResponsesRequest. */
export const ResponsesRequestParts = {
  shell: ResponsesRequest.extend({ input: inputOf(z.unknown()), tools: toolsOf(z.unknown()) }),
  elements: { input: InputItem, tools: Tool },
};

/** GET /v1/responses/{id}/input_items query. */
export const InputItemsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().max(256).optional(),
  before: z.string().max(256).optional(),
  'include[]': z.union([z.string(), z.array(z.string())]).optional(),
  include: z.union([z.string(), z.array(z.string())]).optional(),
});
