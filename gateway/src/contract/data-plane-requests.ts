import { z } from 'zod';

const Text = z.string().max(50_000_000);

/** The content part shapes of the Chat Completions API; adapters rely on each carrying its payload. */
const ContentPart = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: Text }),
  z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }) }),
  z.looseObject({ type: z.literal('input_audio'), input_audio: z.looseObject({ data: z.string(), format: z.string() }) }),
  z.looseObject({
    type: z.literal('file'),
    file: z
      .looseObject({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() })
      .refine((f) => f.file_data !== undefined || f.file_id !== undefined, { message: 'needs file_data or file_id' }),
  }),
  z.looseObject({ type: z.literal('refusal'), refusal: Text }),
]);
const Content = z.union([Text, z.array(ContentPart).max(10_000)]).nullable();

const ToolCall = z.looseObject({
  id: z.string().max(256),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1).max(256), arguments: z.string() }),
});

const Message = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: Content.optional(),
  name: z.string().max(256).optional(),
  tool_calls: z.array(ToolCall).max(1000).nullable().optional(),
  tool_call_id: z.string().max(256).optional(),
});

const Tool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1).max(256),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1).max(256) }) }),
]);

const ResponseFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().min(1).max(256),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

const Tokens = z.number().int().min(1).max(10_000_000);

/** OpenAI Chat Completions request: every known field; unknown top-level fields are rejected (typos must not pass). */
export const ChatCompletionRequest = z.strictObject({
  model: z.string().min(1).max(256),
  messages: z.array(Message).min(1, { message: 'must contain at least one message' }).max(100_000),
  stream: z.boolean().nullable().optional(),
  stream_options: z.strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).nullable().optional(),
  max_tokens: Tokens.nullable().optional(),
  max_completion_tokens: Tokens.nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  n: z.number().int().min(1).max(128).nullable().optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
  presence_penalty: z.number().min(-2).max(2).nullable().optional(),
  frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().max(256).optional(),
  tools: z.array(Tool).max(512).optional(),
  tool_choice: ToolChoice.optional(),
  parallel_tool_calls: z.boolean().optional(),
  response_format: ResponseFormat.optional(),
  reasoning_effort: z.string().max(32).nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  store: z.boolean().nullable().optional(),
  service_tier: z.string().max(32).nullable().optional(),
  modalities: z.array(z.string()).nullable().optional(),
  prediction: z.looseObject({}).nullable().optional(),
  audio: z.looseObject({}).nullable().optional(),
  verbosity: z.string().max(32).nullable().optional(),
  prompt_cache_key: z.string().max(256).optional(),
  safety_identifier: z.string().max(256).optional(),
  web_search_options: z.looseObject({}).optional(),
  functions: z.array(z.looseObject({})).optional(),
  function_call: z.union([z.string(), z.looseObject({})]).optional(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

export const EmbeddingsRequest = z.strictObject({
  model: z.string().min(1).max(256),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(4096),
    z.array(z.number().int()).min(1),
    z.array(z.array(z.number().int())).min(1).max(4096),
  ]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).max(8192).optional(),
  user: z.string().max(256).optional(),
});
export type EmbeddingsRequest = z.infer<typeof EmbeddingsRequest>;
