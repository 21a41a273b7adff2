import { z } from 'zod';

// Anthropic Messages requests (POST /v1/messages and /v1/messages/count_tokens). Objects are loose: a field agentgw does
// not know yet goes on to an Anthropic upstream as sent, and translation names it in a 400 when it cannot carry it.

const Text = z.string().max(50_000_000);

const Block = z.looseObject({ type: z.string().min(1).max(128) });

const TextBlock = z.looseObject({ type: z.literal('text'), text: Text });

const Content = z.union([Text, z.array(Block).max(100_000)]);

const Message = z.looseObject({
  // "system": instructions in the middle of a conversation (a beta Claude Code uses).
  role: z.enum(['user', 'assistant', 'system']),
  content: Content,
});

const Tool = z.looseObject({
  name: z.string().min(1).max(256),
  type: z.string().max(128).optional(),
});

const ToolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.enum(['auto', 'any']), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1).max(256), disable_parallel_tool_use: z.boolean().optional() }),
]);

const Thinking = z.looseObject({
  type: z.enum(['enabled', 'disabled', 'adaptive']),
  budget_tokens: z.number().int().min(1).optional(),
});

const messagesOf = <T extends z.ZodType>(item: T) => z.array(item).max(100_000);
const toolsOf = <T extends z.ZodType>(item: T) => z.array(item).max(1_000).optional();

const fields = {
  model: z.string().min(1).max(256),
  messages: messagesOf(Message),
  system: z.union([Text, z.array(TextBlock).max(10_000)]).optional(),
  tools: toolsOf(Tool),
  tool_choice: ToolChoice.optional(),
  thinking: Thinking.optional(),
};

export const MessagesRequest = z.looseObject({
  ...fields,
  max_tokens: z.number().int().min(1).max(10_000_000),
  stream: z.boolean().optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string().max(10_000)).max(10_000).optional(),
  metadata: z.looseObject({ user_id: z.string().max(10_000).nullable().optional() }).optional(),
});
export type MessagesRequest = z.infer<typeof MessagesRequest>;

/**
 * MessagesRequest checked in parts (see checkBody): the body with its messages and tools unchecked, and the schema of
 * each. A body passes both exactly when it passes MessagesRequest.
 */
export const MessagesRequestParts = {
  shell: MessagesRequest.extend({ messages: messagesOf(z.unknown()), tools: toolsOf(z.unknown()) }),
  elements: { messages: Message, tools: Tool },
};

/** POST /v1/messages/count_tokens: the request without the output limit. */
export const CountTokensRequest = z.looseObject(fields);
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;
