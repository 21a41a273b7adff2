import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { fastValidChat, fastValidEmbeddings } from './fast-validate.js';
import { ChatCompletionRequest, EmbeddingsRequest } from '../contract/data-plane-requests.js';

type Fast = (b: unknown) => boolean;
type Schema = typeof ChatCompletionRequest | typeof EmbeddingsRequest;

/** The contract: a fast yes is a zod yes whose data deep-equals the input (prototypes, -0 and own keys included). */
function holds(fast: Fast, schema: Schema, b: unknown): boolean {
  if (!fast(b)) return true;
  const r = schema.safeParse(b);
  return r.success && isDeepStrictEqual(r.data, b);
}

const zodOk = (schema: Schema, b: unknown) => schema.safeParse(b).success;

const msgs = [{ role: 'user', content: 'hi' }];
const chat = (extra: Record<string, unknown> = {}) => ({ model: 'openai/gpt-4o-mini', messages: msgs, ...extra });
const emb = (extra: Record<string, unknown> = {}) => ({ model: 'openai/text-embedding-3-small', input: 'hello', ...extra });
/** An object literal whose own `__proto__` key is data, as JSON.parse makes it. */
const withProtoKey = <T extends object>(o: T, value: unknown = {}): T => Object.defineProperty(o, '__proto__', { value, enumerable: true, writable: true, configurable: true });
class Body {
  model = 'm';
  messages = msgs;
}
class MyArray<T> extends Array<T> {}
const sparse = (n: number) => {
  const a: unknown[] = [];
  a.length = n;
  return a;
};

const TYPICAL_CHAT = {
  model: 'openai/gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a concise assistant that summarises build logs for an engineering team.' },
    { role: 'user', content: 'Summarise step 12 of the nightly build in one short sentence, naming the slowest stage.' },
  ],
  max_tokens: 64,
  temperature: 0.2,
};

describe('typical bodies are fast-valid', () => {
  const chats: Record<string, unknown> = {
    'simple chat': TYPICAL_CHAT,
    'simple chat parsed from JSON': JSON.parse(JSON.stringify(TYPICAL_CHAT)),
    'with tools': {
      model: 'openai/gpt-4o',
      messages: [
        { role: 'system', content: 'You can call tools.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp_c":18}' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
            strict: true,
          },
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    },
    'streaming with stream_options': chat({ stream: true, stream_options: { include_usage: true }, max_completion_tokens: 1000, top_p: 1, user: 'u-1' }),
    'text and image parts': chat({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: 'https://x/y.png', detail: 'low' } }] }],
    }),
    'nulls where nullable': chat({ stream: null, stream_options: null, max_tokens: null, temperature: null, stop: null, seed: null, metadata: null }),
    'every other field': chat({
      n: 2,
      stop: ['\n', 'END'],
      presence_penalty: -2,
      frequency_penalty: 2,
      logit_bias: { '50256': -100 },
      logprobs: true,
      top_logprobs: 20,
      seed: -(2 ** 53 - 1),
      tool_choice: { type: 'function', function: { name: 'f' } },
      response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object' }, strict: true } },
      reasoning_effort: 'low',
      metadata: { team: 'infra' },
      store: false,
      service_tier: 'auto',
      modalities: ['text'],
      prediction: { type: 'content', content: 'x' },
      audio: null,
      verbosity: 'low',
      prompt_cache_key: 'k',
      safety_identifier: 's',
      web_search_options: {},
      functions: [{ name: 'f' }],
      function_call: 'auto',
    }),
    'loose keys pass through in messages': chat({ messages: [{ role: 'assistant', content: 'x', refusal: null, reasoning_content: 'because' }] }),
    'boundaries: 256-char model, -0 temperature, 2 temperature': chat({ model: 'a'.repeat(256), temperature: -0, top_p: 0 }),
    'astral model: 257 UTF-16 units but 256 code points': chat({ model: 'a'.repeat(255) + '😀' }),
  };
  for (const [name, b] of Object.entries(chats)) {
    test(`chat: ${name}`, () => {
      expect(zodOk(ChatCompletionRequest, b)).toBe(true);
      expect(fastValidChat(b)).toBe(true);
      expect(holds(fastValidChat, ChatCompletionRequest, b)).toBe(true);
    });
  }
  const embs: Record<string, unknown> = {
    string: emb(),
    'string[]': emb({ input: ['a', 'b'], encoding_format: 'float', dimensions: 256, user: 'u' }),
    'number[]': emb({ input: [1, 2, 3, 50256] }),
    'number[][]': emb({ input: [[1, 2], [3], []], encoding_format: 'base64' }),
    '4096 strings': emb({ input: Array(4096).fill('x') }),
  };
  for (const [name, b] of Object.entries(embs)) {
    test(`embeddings: ${name}`, () => {
      expect(zodOk(EmbeddingsRequest, b)).toBe(true);
      expect(fastValidEmbeddings(b)).toBe(true);
      expect(holds(fastValidEmbeddings, EmbeddingsRequest, b)).toBe(true);
    });
  }
});

describe('near misses are not fast-valid', () => {
  // [name, body, zod's verdict]: where zod says yes, the fast path declines because of shape or deep-equality.
  const chats: [string, unknown, boolean][] = [
    ['not an object', 'x', false],
    ['array body', [chat()], false],
    ['null body', null, false],
    ['missing model', { messages: msgs }, false],
    ['empty model', chat({ model: '' }), false],
    ['257-char model', chat({ model: 'a'.repeat(257) }), false],
    ['astral model of 257 code points', chat({ model: 'a'.repeat(256) + '😀' }), false],
    ['missing messages', { model: 'm' }, false],
    ['empty messages', chat({ messages: [] }), false],
    ['messages not an array', chat({ messages: { 0: msgs[0] } }), false],
    ['bad role', chat({ messages: [{ role: 'bot', content: 'x' }] }), false],
    ['no role', chat({ messages: [{ content: 'x' }] }), false],
    ['numeric content', chat({ messages: [{ role: 'user', content: 1 }] }), false],
    ['null name', chat({ messages: [{ role: 'user', name: null }] }), false],
    ['257-char name', chat({ messages: [{ role: 'user', name: 'n'.repeat(257) }] }), false],
    ['tool call without function', chat({ messages: [{ role: 'assistant', tool_calls: [{ id: '1', type: 'function' }] }] }), false],
    ['tool call with empty name', chat({ messages: [{ role: 'assistant', tool_calls: [{ id: '1', type: 'function', function: { name: '', arguments: '' } }] }] }), false],
    ['unknown top-level key', chat({ temprature: 0.2 }), false],
    ['user null (optional, not nullable)', chat({ user: null }), false],
    ['tools null', chat({ tools: null }), false],
    ['tool_choice null', chat({ tool_choice: null }), false],
    ['parallel_tool_calls null', chat({ parallel_tool_calls: null }), false],
    ['temperature NaN', chat({ temperature: NaN }), false],
    ['temperature Infinity', chat({ temperature: Infinity }), false],
    ['temperature 2.0000001', chat({ temperature: 2.0000001 }), false],
    ['temperature as string', chat({ temperature: '0.2' }), false],
    ['top_p -0.1', chat({ top_p: -0.1 }), false],
    ['max_tokens 1.5', chat({ max_tokens: 1.5 }), false],
    ['max_tokens 0', chat({ max_tokens: 0 }), false],
    ['max_tokens 10,000,001', chat({ max_tokens: 10_000_001 }), false],
    ['n 129', chat({ n: 129 }), false],
    ['seed 2**53', chat({ seed: 2 ** 53 }), false],
    ['seed 0.5', chat({ seed: 0.5 }), false],
    ['stop with 5 strings', chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), false],
    ['stop nested array', chat({ stop: [['a']] }), false],
    ['stream_options extra key', chat({ stream_options: { include_usage: true, x: 1 } }), false],
    ['stream_options non-boolean', chat({ stream_options: { include_usage: 'yes' } }), false],
    ['metadata number value', chat({ metadata: { a: 1 } }), false],
    ['logit_bias NaN', chat({ logit_bias: { a: NaN } }), false],
    ['response_format unknown type', chat({ response_format: { type: 'yaml' } }), false],
    ['tool parameters an array', chat({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }), false],
    ['undefined model', chat({ model: undefined }), false],
    ['sparse messages', chat({ messages: sparse(2) }), false],
    ['top-level __proto__ key (JSON.parse)', JSON.parse('{"model":"m","messages":[{"role":"user"}],"__proto__":{}}'), false],
    // zod accepts these, but its data would not deep-equal the input, or the shape is left to zod
    ['message __proto__ key: zod drops it', chat({ messages: [withProtoKey({ role: 'user' })] }), true],
    ['tool parameters __proto__ key: zod drops it', chat({ tools: [{ type: 'function', function: { name: 'f', parameters: withProtoKey({ type: 'object' }) } }] }), true],
    ['null-prototype body', Object.assign(Object.create(null), chat()), true],
    ['class-instance body', new Body(), true],
    ['inherited model', Object.assign(Object.create({ model: 'm' }), { messages: msgs }), true],
    ['Array subclass of messages', chat({ messages: MyArray.from(msgs) }), true],
    ['stream undefined', chat({ stream: undefined }), true],
    ['input_audio part (left to zod)', chat({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }] }), true],
    ['file part (left to zod)', chat({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] }), true],
  ];
  for (const [name, b, zodVerdict] of chats) {
    test(`chat: ${name}`, () => {
      expect(fastValidChat(b)).toBe(false);
      expect(zodOk(ChatCompletionRequest, b)).toBe(zodVerdict);
    });
  }
  const embs: [string, unknown, boolean][] = [
    ['missing input', { model: 'm' }, false],
    ['empty input array', emb({ input: [] }), false],
    ['mixed input', emb({ input: ['a', 1] }), false],
    ['float tokens', emb({ input: [1, 2.5] }), false],
    ['unsafe int token', emb({ input: [2 ** 53] }), false],
    ['4097 strings', emb({ input: Array(4097).fill('x') }), false],
    ['4097 token rows', emb({ input: Array(4097).fill([1]) }), false],
    ['nested strings', emb({ input: [['a']] }), false],
    ['dimensions 0', emb({ dimensions: 0 }), false],
    ['dimensions 8193', emb({ dimensions: 8193 }), false],
    ['dimensions null', emb({ dimensions: null }), false],
    ['encoding_format null', emb({ encoding_format: null }), false],
    ['bad encoding_format', emb({ encoding_format: 'int8' }), false],
    ['unknown key', emb({ inputs: 'x' }), false],
    ['NaN token', emb({ input: [NaN] }), false],
    ['holes in tokens', emb({ input: sparse(3) }), false],
    ['null-prototype body', Object.assign(Object.create(null), emb()), true],
  ];
  for (const [name, b, zodVerdict] of embs) {
    test(`embeddings: ${name}`, () => {
      expect(fastValidEmbeddings(b)).toBe(false);
      expect(zodOk(EmbeddingsRequest, b)).toBe(zodVerdict);
    });
  }
});

// ---------------------------------------------------------------- generators

/** Strings at a max-length boundary, in ASCII, astral pairs (two units, one code point) and lone surrogates. */
function boundaryStrings(max: number): string[] {
  const out: string[] = [];
  for (const n of [max - 1, max, max + 1, 2 * max, 2 * max + 1]) {
    out.push('a'.repeat(n));
    out.push('😀'.repeat(n >> 1) + (n & 1 ? 'a' : '')); // n units, ceil(n/2) code points
    out.push('\ud800'.repeat(n)); // n units, n code points
    out.push('\udc00\ud800'.repeat(n >> 1)); // reversed pairs are not pairs
  }
  out.push('a'.repeat(max - 1) + '😀'); // max + 1 units, max code points
  out.push('a'.repeat(max) + '😀'); // max + 2 units, max + 1 code points
  return out;
}

const oneof = fc.oneof;

/** Odd primitives: nullish, non-finite, -0, fractions, values either side of every bound in the schemas, near-enum strings. */
const oddPrimitive = fc.constantFrom<unknown>(
  null, undefined, NaN, Infinity, -Infinity, -0, 0, 1, 1.5, -1, 2, 2.0000001, -2.0000001, 1.0000001, 20, 21, 128, 129,
  4096, 4097, 8192, 8193, 10_000_000, 10_000_001, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 1e300, true, false,
  '', 'x', 'text', 'image_url', 'input_audio', 'function', 'user', 'bot', 'auto', 'AUTO', 'json_schema', 'float', 'int8', '0.2',
);
/** Odd objects, built fresh each time (mutations write into them): wrong shapes, exotic prototypes, holes, __proto__ keys. */
const oddFactories: (() => unknown)[] = [
  () => [],
  () => [[]],
  () => [1],
  () => [1.5],
  () => ['a'],
  () => ['a', 1],
  () => ['a', 'b', 'c', 'd', 'e'],
  () => [{ role: 'user' }],
  () => [{ type: 'text', text: 'x' }],
  () => [{ type: 'text' }],
  () => ({}),
  () => ({ type: 'text' }),
  () => ({ role: 'user', content: 'x' }),
  () => ({ type: 'function', function: { name: 'f', arguments: '' } }),
  () => ({ type: 'function', function: { name: 'f' } }),
  () => ({ include_usage: true }),
  () => ({ constructor: () => 1 }),
  () => Object.create(null),
  () => Object.assign(Object.create(null), { role: 'user' }),
  () => Object.create({ role: 'user' }),
  () => withProtoKey({ a: 1 }),
  () => withProtoKey({}, 'x'),
  () => withProtoKey({ role: 'user' }, Object.prototype),
  () => new Body(),
  () => MyArray.from([{ role: 'user' }]),
  () => MyArray.from([1, 2]),
  () => sparse(1),
  () => [1, , 2],
  () => new String('x'),
  () => new Number(1),
  () => new Date(0),
  () => new Map(),
  () => () => 1,
  () => 1n,
  () => Symbol('s'),
];
const oddObject = fc.integer({ min: 0, max: oddFactories.length - 1 }).map((i) => oddFactories[i]!());
const odd = oneof(
  { arbitrary: oddPrimitive, weight: 6 },
  { arbitrary: oddObject, weight: 3 },
  { arbitrary: fc.constantFrom(...boundaryStrings(256), ...boundaryStrings(32)), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
);

/**
 * How leaves are drawn: `typical` always valid; `near` mostly valid, sometimes a value next to this leaf's bounds
 * (`edges`), sometimes any odd value; about half of the near bodies end up with no odd leaf at all.
 */
type Leaf = <T>(a: fc.Arbitrary<T>, edges?: readonly unknown[]) => fc.Arbitrary<unknown>;
const typical: Leaf = (a) => a;
const near: Leaf = (a, edges) =>
  oneof(
    { arbitrary: a as fc.Arbitrary<unknown>, weight: 300 },
    { arbitrary: odd, weight: 1 },
    { arbitrary: edges?.length ? fc.constantFrom(...edges) : odd, weight: 3 },
  );

const plain = { noNullPrototype: true } as const;
const str = (maxLength = 24) => oneof(fc.string({ maxLength }), fc.string({ maxLength, unit: 'binary' }));
const strMax = (max: number) => oneof({ arbitrary: str(), weight: 8 }, { arbitrary: fc.constantFrom(...boundaryStrings(max).filter((s) => s.length <= max)), weight: 1 });
const name = oneof(fc.string({ minLength: 1, maxLength: 24 }), fc.constantFrom('a'.repeat(256), 'a'.repeat(255) + '😀', '😀'.repeat(128)));
const nullable = <T>(a: fc.Arbitrary<T>) => oneof({ arbitrary: a, weight: 4 }, { arbitrary: fc.constant(null), weight: 1 });
const num = (min: number, max: number) => oneof(fc.double({ min, max, noNaN: true }), fc.constantFrom(min, max, -0, (min + max) / 2));
const int = (min: number, max: number) => oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
const json = fc.jsonValue({ maxDepth: 2 });

// values next to each kind of bound
const nullish = [null, undefined];
const intEdges = (min: number, max: number) => [min - 1, max + 1, min + 0.5, max - 0.5, -0, NaN, Infinity, -Infinity, String(min), ...nullish];
const numEdges = (min: number, max: number) => [min - 1e-9, max + 1e-9, min - 1, max + 1, -0, NaN, Infinity, -Infinity, String(max), ...nullish];
const strEdges = (max: number) => [...boundaryStrings(max), '', 0, ...nullish];
const boolEdges = [0, 1, 'true', ...nullish];
const enumEdges = (...values: string[]) => [...values.map((v) => v.toUpperCase()), ...values.map((v) => `${v} `), '', 'x', 0, ...nullish];

function arbitraries(L: Leaf) {
  const isNear = L === near;
  /** Dictionary keys: when near, also the keys zod treats specially. */
  const key = isNear ? oneof({ arbitrary: fc.string({ maxLength: 12 }), weight: 30 }, fc.constantFrom('__proto__', 'constructor')) : fc.string({ maxLength: 12 });
  /** A record's value when near: mostly the valid kind, sometimes odd, sometimes a function (zod's isPlainObject looks at a `constructor` one). */
  const recordValue = <T>(a: fc.Arbitrary<T>) => (isNear ? oneof({ arbitrary: a as fc.Arbitrary<unknown>, weight: 30 }, odd, fc.constant(() => 1)) : a);
  const dict = <T>(v: fc.Arbitrary<T>, maxKeys = 4) => L(fc.dictionary(key, recordValue(v), { maxKeys, ...plain }));
  const rec = <T>(model: { [K in keyof T]: fc.Arbitrary<T[K]> }, requiredKeys?: (keyof T)[]) =>
    L(fc.record(model, { ...(requiredKeys ? { requiredKeys } : {}), ...plain }));
  const arr = <T>(a: fc.Arbitrary<T>, c: fc.ArrayConstraints = {}) => L(fc.array(a, c));
  const jsonObject = dict(json);
  const bool = L(fc.boolean(), boolEdges);
  const nbool = L(nullable(fc.boolean()), boolEdges);
  const s = (max: number) => L(strMax(max), strEdges(max));
  const ns = (max: number) => L(nullable(strMax(max)), strEdges(max));
  const fnName = L(name, strEdges(256));

  const textPart = rec({ type: L(fc.constant('text'), enumEdges('text', 'image_url')), text: L(str(80), [0, ...nullish]) });
  const imagePart = rec({
    type: L(fc.constant('image_url'), enumEdges('image_url', 'text')),
    image_url: rec({ url: L(fc.webUrl(), ['', 0, ...nullish]), detail: L(fc.constantFrom('auto', 'low', 'high'), enumEdges('auto', 'low', 'high')) }, ['url']),
  });
  const toolCall = rec({
    id: s(256),
    type: L(fc.constant('function'), enumEdges('function')),
    function: rec({ name: fnName, arguments: L(str(40), [0, {}, ...nullish]) }),
  });
  const roles = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];
  const message = rec(
    {
      role: L(fc.constantFrom(...roles), enumEdges(...roles)),
      content: L(oneof({ arbitrary: str(120), weight: 6 }, fc.constant(null), arr(oneof(textPart, imagePart), { maxLength: 3 })), [0, undefined, {}]),
      name: s(256),
      tool_calls: L(nullable(arr(toolCall, { maxLength: 2 })), [undefined, {}]),
      tool_call_id: s(256),
      reasoning_content: str(), // loose: passes through
    },
    ['role'],
  );
  const tool = rec({
    type: L(fc.constant('function'), enumEdges('function')),
    function: rec({ name: fnName, description: L(str(), [0, ...nullish]), parameters: jsonObject, strict: nbool }, ['name']),
  });
  const responseFormat = L(
    oneof(
      rec({ type: L(fc.constant('text'), enumEdges('text', 'json_object', 'json_schema')) }),
      rec({ type: L(fc.constant('json_object'), enumEdges('json_object', 'text')) }),
      rec({
        type: L(fc.constant('json_schema'), enumEdges('json_schema')),
        json_schema: rec({ name: fnName, description: L(str(), [0, ...nullish]), schema: jsonObject, strict: nbool }, ['name']),
      }),
    ),
  );
  const model = L(oneof({ arbitrary: fc.constantFrom('openai/gpt-4o-mini', 'anthropic/claude-sonnet-4', 'mock/echo'), weight: 4 }, name), strEdges(256));
  const tokens = L(nullable(int(1, 10_000_000)), intEdges(1, 10_000_000));
  const penalty = L(nullable(num(-2, 2)), numEdges(-2, 2));
  const chatFields = {
    model,
    messages: arr(message, { minLength: 1, maxLength: 4 }),
    stream: nbool,
    stream_options: L(nullable(rec({ include_usage: bool, include_obfuscation: bool }, [])), [{ include_usage: 1 }, { include_usage: true, x: true }, undefined]),
    max_tokens: tokens,
    max_completion_tokens: tokens,
    temperature: L(nullable(num(0, 2)), numEdges(0, 2)),
    top_p: L(nullable(num(0, 1)), numEdges(0, 1)),
    n: L(nullable(int(1, 128)), intEdges(1, 128)),
    stop: L(nullable(oneof(str(), arr(L(str(), [0, ...nullish]), { maxLength: 4 }))), [0, undefined]),
    presence_penalty: penalty,
    frequency_penalty: penalty,
    logit_bias: L(nullable(dict(num(-100, 100), 3)), [undefined, 0]),
    logprobs: nbool,
    top_logprobs: L(nullable(int(0, 20)), intEdges(0, 20)),
    seed: L(
      nullable(oneof(fc.integer(), fc.maxSafeInteger(), fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, -0))),
      [2 ** 53, -(2 ** 53), 2 ** 60, 0.5, NaN, Infinity, '1', undefined],
    ),
    user: s(256),
    tools: arr(tool, { maxLength: 3 }),
    tool_choice: L(
      oneof(fc.constantFrom('none', 'auto', 'required'), rec({ type: L(fc.constant('function'), enumEdges('function')), function: rec({ name: fnName }) })),
      enumEdges('none', 'auto', 'required'),
    ),
    parallel_tool_calls: bool,
    response_format: responseFormat,
    reasoning_effort: ns(32),
    metadata: L(nullable(dict(str(), 3)), [undefined, 0]),
    store: nbool,
    service_tier: ns(32),
    modalities: L(nullable(arr(L(str(8), [0, ...nullish]), { maxLength: 2 })), [undefined, 'text']),
    prediction: L(nullable(jsonObject), [undefined, 0, 'x']),
    audio: L(nullable(jsonObject), [undefined, 0, 'x']),
    verbosity: ns(32),
    prompt_cache_key: s(256),
    safety_identifier: s(256),
    web_search_options: jsonObject,
    functions: arr(jsonObject, { maxLength: 2 }),
    function_call: L(oneof(str(), jsonObject), [0, ...nullish]),
  };
  const chat = fc.record(chatFields, { requiredKeys: ['model', 'messages'], ...plain });

  const token = L(oneof(fc.nat(100_000), fc.constantFrom(Number.MAX_SAFE_INTEGER, -1, -0)), [2 ** 53, 1.5, NaN, Infinity, '1', ...nullish]);
  const embeddings = fc.record(
    {
      model,
      input: L(
        oneof(str(), arr(L(str(), [0, ...nullish]), { minLength: 1, maxLength: 5 }), arr(token, { minLength: 1, maxLength: 8 }), arr(arr(token, { maxLength: 4 }), { minLength: 1, maxLength: 3 })),
        [[], [[]], [['a']], 0, ...nullish],
      ),
      encoding_format: L(fc.constantFrom('float', 'base64'), enumEdges('float', 'base64')),
      dimensions: L(int(1, 8192), intEdges(1, 8192)),
      user: s(256),
    },
    { requiredKeys: ['model', 'input'], ...plain },
  );
  return { chat, embeddings, chatKeys: Object.keys(chatFields) };
}

const valid = arbitraries(typical);
const nearby = arbitraries(near);

const keyPool = [
  ...valid.chatKeys,
  'role', 'content', 'name', 'tool_calls', 'tool_call_id', 'type', 'text', 'image_url', 'url', 'detail', 'id', 'function',
  'arguments', 'description', 'parameters', 'strict', 'include_usage', 'include_obfuscation', 'json_schema', 'schema',
  'input', 'encoding_format', 'dimensions', '__proto__', 'constructor', 'toString', 'extra', '0',
];

type Mutation = { node: number; kind: number; slot: number; key: string; value: unknown };
const mutation = fc.record({ node: fc.nat(), kind: fc.nat(5), slot: fc.nat(), key: fc.constantFrom(...keyPool), value: odd });

/** Copies plain objects and plain arrays (own keys, `__proto__` data keys, holes); leaves everything else shared. */
function copy(v: unknown): unknown {
  if (Array.isArray(v) && Object.getPrototypeOf(v) === Array.prototype) {
    const out: unknown[] = new Array(v.length);
    for (const k of Object.keys(v)) (out as unknown as Record<string, unknown>)[k] = copy((v as unknown as Record<string, unknown>)[k]);
    return out;
  }
  if (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) setOwn(out, k, copy((v as Record<string, unknown>)[k]));
    return out;
  }
  return v;
}

/** Plain containers in the body, each once (mutations can alias a node into two places, or make a cycle). */
function containers(v: unknown, out: object[], seen = new Set<object>()): object[] {
  if (typeof v === 'object' && v !== null && !seen.has(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === Array.prototype)) {
    seen.add(v);
    out.push(v);
    for (const k of Object.keys(v)) containers((v as Record<string, unknown>)[k], out, seen);
  }
  return out;
}

function setOwn(o: object, k: string, value: unknown) {
  Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
}

/** Applies each mutation to one of the body's containers: replace a value, add a key, delete a key, nest, alias, grow. */
function mutate(body: unknown, ms: Mutation[]): unknown {
  const root = copy(body);
  for (const m of ms) {
    const nodes = containers(root, []);
    if (nodes.length === 0) break;
    const node = nodes[m.node % nodes.length] as Record<string, unknown>;
    const keys = Object.keys(node);
    const existing = keys.length ? keys[m.slot % keys.length]! : undefined;
    switch (m.kind) {
      case 0: // replace a value
        if (existing !== undefined) setOwn(node, existing, m.value);
        break;
      case 1: // add a key (an element for arrays)
        if (Array.isArray(node)) node.push(m.value);
        else setOwn(node, m.key, m.value);
        break;
      case 2: // delete a key; on arrays this leaves a hole, or empties them
        if (existing !== undefined) {
          if (Array.isArray(node) && m.slot % 2) node.length = 0;
          else delete node[existing];
        }
        break;
      case 3: // nest: x => [x]
        if (existing !== undefined) setOwn(node, existing, [node[existing]]);
        break;
      case 4: // a key and its value copied in from another node (may alias, or close a cycle)
        if (!Array.isArray(node)) {
          const donor = nodes[m.slot % nodes.length] as Record<string, unknown>;
          const dks = Object.keys(donor);
          const dk = dks[m.node % Math.max(1, dks.length)];
          if (dk !== undefined) setOwn(node, dk, donor[dk]);
        }
        break;
      default: // 5: grow an array with copies of its first element
        if (Array.isArray(node) && node.length) node.push(...Array<unknown>(m.slot % 5).fill(node[0]));
    }
  }
  return root;
}

/** Near-schema bodies: leaves drawn near the schema, then 0..2 structural mutations. */
const nearChat = fc.tuple(nearby.chat, fc.array(mutation, { maxLength: 2 })).map(([b, ms]) => mutate(b, ms));
const nearEmbeddings = fc.tuple(nearby.embeddings, fc.array(mutation, { maxLength: 2 })).map(([b, ms]) => mutate(b, ms));

describe('property: fast yes implies zod yes with deep-equal data', () => {
  const seed = 20240611;

  test('typical valid chat bodies: zod accepts all, the fast path takes most', () => {
    let fast = 0;
    let total = 0;
    fc.assert(
      fc.property(valid.chat, (b) => {
        total++;
        expect(zodOk(ChatCompletionRequest, b)).toBe(true);
        if (fastValidChat(b)) fast++;
        expect(holds(fastValidChat, ChatCompletionRequest, b)).toBe(true);
      }),
      { seed, numRuns: 3000 },
    );
    console.log(`typical chat: fast path took ${fast}/${total}`);
    expect(fast / total).toBeGreaterThan(0.95);
  }, 60_000);

  test('typical valid embeddings bodies: zod accepts all, the fast path takes most', () => {
    let fast = 0;
    let total = 0;
    fc.assert(
      fc.property(valid.embeddings, (b) => {
        total++;
        expect(zodOk(EmbeddingsRequest, b)).toBe(true);
        if (fastValidEmbeddings(b)) fast++;
        expect(holds(fastValidEmbeddings, EmbeddingsRequest, b)).toBe(true);
      }),
      { seed, numRuns: 2000 },
    );
    console.log(`typical embeddings: fast path took ${fast}/${total}`);
    expect(fast / total).toBeGreaterThan(0.95);
  });

  const tally = (fast: Fast, schema: Schema, arb: fc.Arbitrary<unknown>, numRuns: number) => {
    const t = { fast: 0, zod: 0, total: 0 };
    fc.assert(
      fc.property(arb, (b) => {
        const f = fast(b);
        const r = schema.safeParse(b);
        t.total++;
        if (f) t.fast++;
        if (r.success) t.zod++;
        if (f) {
          expect(r.success).toBe(true);
          expect(isDeepStrictEqual(r.data, b)).toBe(true);
        }
      }),
      { seed, numRuns },
    );
    return t;
  };

  test('near-schema chat bodies', () => {
    const t = tally(fastValidChat, ChatCompletionRequest, nearChat, 30_000);
    console.log('near chat', t);
    expect(t.fast).toBeGreaterThan(t.total / 5); // plenty of valid bodies take the fast path
    expect(t.zod).toBeLessThan(t.total * 0.8); // and plenty are invalid
  }, 120_000);

  test('near-schema embeddings bodies', () => {
    const t = tally(fastValidEmbeddings, EmbeddingsRequest, nearEmbeddings, 15_000);
    console.log('near embeddings', t);
    expect(t.fast).toBeGreaterThan(t.total / 5);
    expect(t.zod).toBeLessThan(t.total * 0.8);
  }, 60_000);

  test('any JSON value, and JSON texts with __proto__ / constructor keys', () => {
    const jsonText = fc
      .tuple(valid.chat, fc.constantFrom('__proto__', 'constructor'), fc.constantFrom('role', 'type', 'model', 'name', 'city'))
      .map(([b, k, before]) => JSON.stringify(b).replace(`"${before}"`, `"${k}":{},"${before}"`));
    fc.assert(
      fc.property(oneof(fc.jsonValue(), jsonText.map((t) => JSON.parse(t) as unknown)), (b) => {
        expect(holds(fastValidChat, ChatCompletionRequest, b)).toBe(true);
        expect(holds(fastValidEmbeddings, EmbeddingsRequest, b)).toBe(true);
      }),
      { seed, numRuns: 3000 },
    );
  });
});


describe('outside the contract (documented in fast-validate.ts): what the fast path cannot see without allocating', () => {
  test('a symbol key on a message is invisible to for...in; zod ignores it too but its data lacks it', () => {
    const b = chat({ messages: [{ role: 'user', [Symbol('s')]: 1 }] });
    expect(fastValidChat(b)).toBe(true);
    const r = ChatCompletionRequest.safeParse(b);
    expect(r.success).toBe(true);
    expect(isDeepStrictEqual(r.data, b)).toBe(false);
  });
  test('a non-enumerable property is invisible to for...in, while zod reads it', () => {
    const b = chat();
    Object.defineProperty(b, 'temperature', { value: 'hot', enumerable: false });
    expect(fastValidChat(b)).toBe(true);
    expect(zodOk(ChatCompletionRequest, b)).toBe(false);
  });
});
