// A Gemini generateContent request (camelCase members) -> an OpenAI Chat Completions request, for upstreams that do
// not speak Gemini. What cannot be carried over is a 400 naming the field; the few pure hints listed in
// GEMINI_DROPPED_HINTS are left out (README lists them).
import type {
  OpenAIAssistantMessage,
  OpenAIChatMessage,
  OpenAIChatRequest,
  OpenAIContentPart,
  OpenAITool,
  OpenAIToolCall,
  ThinkingBlock,
} from '../providers/openai-format.js';
import { decodeThinkingBlocks, isCarriedThinking } from './carried-thinking.js';
import { invalidField, isObject } from './invalid-field.js';

type Json = Record<string, unknown>;

export type GeminiReasoningEffort = 'low' | 'medium' | 'high';
export type TranslatedGeminiChatRequest = OpenAIChatRequest & { reasoning_effort?: GeminiReasoningEffort; logprobs?: boolean; top_logprobs?: number };

export interface GeminiToChatOptions {
  /** The target's model id. */
  model: string;
  /** The output limit field the target takes (OpenAI's reasoning models refuse max_tokens). */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Whether the target model reasons (Claude's with extended thinking too), so that thinkingConfig becomes reasoning_effort. */
  reasons: boolean;
  stream: boolean;
  /** The target is Claude, which takes back its signed thinking that a thoughtSignature carried (see carried-thinking.ts). */
  carryThinking?: boolean;
  /** The target's own output limit, when known: a larger maxOutputTokens is lowered to it. */
  maxOutputCap?: number;
}

/** Members left out of a translated call, with why: sampling and display hints the target has no counterpart for. */
export const GEMINI_DROPPED_HINTS: Readonly<Record<string, string>> = {
  'generationConfig.topK': 'Chat Completions has no top-k sampling (Gemini CLI always sends it)',
  'generationConfig.thinkingConfig': "carried as reasoning_effort to targets that reason (Claude: a thinking budget); left out for the others",
  'generationConfig.responseModalities': 'only ["TEXT"] can be carried; it is the default',
  'safetySettings (BLOCK_NONE, OFF)': 'asks for no filtering, which other targets cannot be made stricter by',
  'thoughtSignature, thought parts of earlier turns': "signed by Gemini, read by no other provider",
};

/** Generation settings carried over (the rest is a 400, or a hint above). */
const GENERATION_KEYS: ReadonlySet<string> = new Set([
  'temperature', 'topP', 'topK', 'maxOutputTokens', 'stopSequences', 'candidateCount', 'presencePenalty', 'frequencyPenalty',
  'seed', 'responseMimeType', 'responseSchema', 'responseJsonSchema', '_responseJsonSchema', 'responseLogprobs', 'logprobs',
  'thinkingConfig', 'responseModalities',
]);

const REQUEST_KEYS: ReadonlySet<string> = new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings']);

/** Thresholds that ask for nothing more than a target does anyway. */
const NO_FILTERING: ReadonlySet<unknown> = new Set(['BLOCK_NONE', 'OFF', 'HARM_BLOCK_THRESHOLD_UNSPECIFIED']);

const MAX_STOP_SEQUENCES = 4;

export function geminiToChatRequest(body: Json, opts: GeminiToChatOptions): TranslatedGeminiChatRequest {
  for (const key of Object.keys(body)) {
    if (!REQUEST_KEYS.has(key)) {
      throw invalidField(key, `Field "${key}" cannot be carried to a model that does not speak Gemini's API: remove it, or use a gemini target.`);
    }
  }
  const messages: OpenAIChatMessage[] = [];
  if (body.systemInstruction != null) messages.push({ role: 'system', content: textOfParts(body.systemInstruction, 'systemInstruction') });
  messages.push(...convertContents(body.contents, opts.carryThinking === true));
  const out: TranslatedGeminiChatRequest = { model: opts.model, messages };

  const tools = convertTools(body.tools, out);
  if (tools.length > 0) out.tools = tools;
  convertToolConfig(body.toolConfig, out);
  convertSafety(body.safetySettings);
  convertGeneration(body.generationConfig, out, opts);
  if (opts.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true };
  }
  return out;
}

function textOfParts(content: unknown, field: string): string {
  const parts = isObject(content) ? content.parts : undefined;
  if (!Array.isArray(parts)) throw invalidField(`${field}.parts`, `${field} must hold parts: {"parts": [{"text": "..."}]}.`);
  let text = '';
  parts.forEach((p, i) => {
    if (!isObject(p) || typeof p.text !== 'string') throw invalidField(`${field}.parts.${i}`, `Only text parts of ${field} can be carried to a model that does not speak Gemini's API.`);
    text += (text ? '\n' : '') + p.text;
  });
  return text;
}

/** Ids for calls sent without one (Gemini pairs calls and responses by name and order). */
class CallIds {
  private readonly open = new Map<string, string[]>();
  private n = 0;

  call(name: string, id: unknown): string {
    const callId = typeof id === 'string' && id !== '' ? id : `call_gemini_${this.n++}`;
    const list = this.open.get(name) ?? [];
    list.push(callId);
    this.open.set(name, list);
    return callId;
  }

  response(name: string, id: unknown): string {
    const list = this.open.get(name);
    if (typeof id === 'string' && id !== '') {
      const at = list?.indexOf(id) ?? -1;
      if (at !== -1) list!.splice(at, 1);
      return id;
    }
    const first = list?.shift();
    return first ?? `call_gemini_${this.n++}`;
  }
}

function convertContents(contents: unknown, carryThinking: boolean): OpenAIChatMessage[] {
  if (!Array.isArray(contents) || contents.length === 0) throw invalidField('contents', 'contents must be a non-empty array of turns: [{"role": "user", "parts": [{"text": "..."}]}].');
  const ids = new CallIds();
  const out: OpenAIChatMessage[] = [];
  contents.forEach((c, i) => {
    const field = `contents.${i}`;
    if (!isObject(c)) throw invalidField(field, `${field} must be an object with role and parts.`);
    const role = c.role ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== 'function') throw invalidField(`${field}.role`, `${field}.role must be "user" or "model".`);
    if (!Array.isArray(c.parts)) throw invalidField(`${field}.parts`, `${field}.parts must be an array of parts.`);
    if (role === 'model') out.push(modelTurn(c.parts, field, ids, carryThinking));
    else out.push(...userTurn(c.parts, field, ids));
  });
  return out;
}

function modelTurn(parts: unknown[], field: string, ids: CallIds, carryThinking: boolean): OpenAIAssistantMessage {
  let text = '';
  const calls: OpenAIToolCall[] = [];
  const thinking: ThinkingBlock[] = [];
  parts.forEach((p, j) => {
    const at = `${field}.parts.${j}`;
    if (!isObject(p)) throw invalidField(at, `${at} must be an object.`);
    // Claude's signed thinking that agentgw carried in a thoughtSignature goes back to Claude only; Gemini's own, nowhere.
    if (carryThinking && isCarriedThinking(p.thoughtSignature)) thinking.push(...decodeThinkingBlocks(p.thoughtSignature, `${at}.thoughtSignature`)!);
    if (p.thought === true) return; // Gemini's own thoughts: no other provider reads them.
    if (typeof p.text === 'string') text += p.text;
    else if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      if (typeof fc.name !== 'string' || fc.name === '') throw invalidField(`${at}.functionCall.name`, `${at}.functionCall needs a name.`);
      if (fc.args != null && !isObject(fc.args)) throw invalidField(`${at}.functionCall.args`, `${at}.functionCall.args must be an object.`);
      calls.push({ id: ids.call(fc.name, fc.id), type: 'function', function: { name: fc.name, arguments: JSON.stringify(fc.args ?? {}) } });
    } else throw unsupportedPart(p, at);
    checkPartExtras(p, at);
  });
  const m: OpenAIAssistantMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) m.tool_calls = calls;
  if (thinking.length > 0) m.thinking_blocks = thinking;
  return m;
}

function userTurn(parts: unknown[], field: string, ids: CallIds): OpenAIChatMessage[] {
  const tools: OpenAIChatMessage[] = [];
  const content: OpenAIContentPart[] = [];
  parts.forEach((p, j) => {
    const at = `${field}.parts.${j}`;
    if (!isObject(p)) throw invalidField(at, `${at} must be an object.`);
    checkPartExtras(p, at);
    if (typeof p.text === 'string') {
      if (p.thought !== true) content.push({ type: 'text', text: p.text });
    } else if (isObject(p.functionResponse)) {
      const fr = p.functionResponse;
      if (typeof fr.name !== 'string' || fr.name === '') throw invalidField(`${at}.functionResponse.name`, `${at}.functionResponse needs the name of the function it answers.`);
      if (fr.parts !== undefined) throw invalidField(`${at}.functionResponse.parts`, `${at}.functionResponse.parts (media in a function response) cannot be carried to a model that does not speak Gemini's API.`);
      tools.push({ role: 'tool', tool_call_id: ids.response(fr.name, fr.id), content: JSON.stringify(fr.response ?? {}) });
    } else if (isObject(p.inlineData)) content.push(inlinePart(p.inlineData, `${at}.inlineData`));
    else if (isObject(p.fileData)) content.push(filePart(p.fileData, `${at}.fileData`));
    else throw unsupportedPart(p, at);
  });
  // Tool results answer the previous turn's calls: they come first, as Chat Completions wants them.
  if (content.length > 0) {
    const only = content.length === 1 && content[0]!.type === 'text' ? content[0]!.text : null;
    tools.push({ role: 'user', content: only ?? content });
  }
  return tools;
}

/** Members of a part besides its data that other providers cannot take. */
function checkPartExtras(p: Json, at: string): void {
  for (const key of ['videoMetadata', 'mediaResolution', 'partMetadata']) {
    if (p[key] != null) throw invalidField(`${at}.${key}`, `${at}.${key} cannot be carried to a model that does not speak Gemini's API: remove it.`);
  }
}

function unsupportedPart(p: Json, at: string) {
  const kind = Object.keys(p).find((k) => k !== 'thought' && k !== 'thoughtSignature') ?? 'part';
  return invalidField(`${at}.${kind}`, `A "${kind}" part cannot be carried to a model that does not speak Gemini's API: send text, inlineData, fileData (an image URL), functionCall or functionResponse parts.`);
}

function inlinePart(blob: Json, at: string): OpenAIContentPart {
  const mime = typeof blob.mimeType === 'string' ? blob.mimeType.toLowerCase() : '';
  const data = typeof blob.data === 'string' ? blob.data : '';
  if (mime.startsWith('image/')) return { type: 'image_url', image_url: { url: `data:${mime};base64,${data}` } };
  if (mime === 'application/pdf') return { type: 'file', file: { file_data: `data:application/pdf;base64,${data}`, filename: typeof blob.displayName === 'string' ? blob.displayName : 'document.pdf' } };
  if (mime === 'audio/wav' || mime === 'audio/mp3' || mime === 'audio/mpeg') return { type: 'input_audio', input_audio: { data, format: mime === 'audio/wav' ? 'wav' : 'mp3' } };
  if (mime.startsWith('text/') || mime === 'application/json') return { type: 'text', text: Buffer.from(data, 'base64').toString('utf8') };
  throw invalidField(`${at}.mimeType`, `Inline data of type "${mime || '(none)'}" cannot be carried to a model that does not speak Gemini's API: send images, PDFs, WAV or MP3 audio, or text.`);
}

function filePart(file: Json, at: string): OpenAIContentPart {
  const uri = typeof file.fileUri === 'string' ? file.fileUri : '';
  const mime = typeof file.mimeType === 'string' ? file.mimeType.toLowerCase() : '';
  if (/^https?:\/\//.test(uri) && (mime === '' || mime.startsWith('image/'))) return { type: 'image_url', image_url: { url: uri } };
  throw invalidField(`${at}.fileUri`, `A file by reference (${mime || 'no mimeType'}) cannot be carried to a model that does not speak Gemini's API: send it inline (inlineData), or use a gemini target.`);
}

/** Gemini's OpenAPI-subset schema (`type: "OBJECT"`, `nullable`) -> JSON Schema (`type: "object"`); JSON Schema passes unchanged. */
function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase();
    else if (k === 'nullable') continue;
    else if (k === 'properties' && isObject(v)) out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, jsonSchemaOf(s)]));
    else out[k] = typeof v === 'object' && v !== null ? jsonSchemaOf(v) : v;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function convertTools(tools: unknown, out: TranslatedGeminiChatRequest): OpenAITool[] {
  if (tools == null) return [];
  if (!Array.isArray(tools)) throw invalidField('tools', 'tools must be an array.');
  const list: OpenAITool[] = [];
  tools.forEach((t, i) => {
    if (!isObject(t)) throw invalidField(`tools.${i}`, `tools.${i} must be an object.`);
    for (const [key, value] of Object.entries(t)) {
      if (key === 'functionDeclarations') {
        if (!Array.isArray(value)) throw invalidField(`tools.${i}.functionDeclarations`, 'functionDeclarations must be an array.');
        value.forEach((d, j) => {
          const at = `tools.${i}.functionDeclarations.${j}`;
          if (!isObject(d) || typeof d.name !== 'string' || d.name === '') throw invalidField(`${at}.name`, `${at} needs a name.`);
          for (const k of Object.keys(d)) {
            if (!['name', 'description', 'parameters', 'parametersJsonSchema', 'behavior'].includes(k) || (k === 'behavior' && d.behavior !== 'BLOCKING')) {
              throw invalidField(`${at}.${k}`, `${at}.${k} cannot be carried to a model that does not speak Gemini's API: remove it.`);
            }
          }
          const parameters = jsonSchemaOf(d.parametersJsonSchema ?? d.parameters);
          list.push({
            type: 'function',
            function: {
              name: d.name,
              ...(typeof d.description === 'string' ? { description: d.description } : {}),
              parameters: isObject(parameters) ? parameters : { type: 'object', properties: {} },
            },
          });
        });
      } else if (key === 'googleSearch' || key === 'googleSearchRetrieval') {
        out.web_search_options = {};
      } else {
        throw invalidField(`tools.${i}.${key}`, `The ${key} tool cannot be carried to a model that does not speak Gemini's API: remove it, or use a gemini target.`);
      }
    }
  });
  return list;
}

function convertToolConfig(config: unknown, out: TranslatedGeminiChatRequest): void {
  if (config == null) return;
  if (!isObject(config)) throw invalidField('toolConfig', 'toolConfig must be an object.');
  for (const key of Object.keys(config)) {
    if (key !== 'functionCallingConfig') throw invalidField(`toolConfig.${key}`, `toolConfig.${key} cannot be carried to a model that does not speak Gemini's API: remove it.`);
  }
  const fcc = config.functionCallingConfig;
  if (fcc == null) return;
  if (!isObject(fcc)) throw invalidField('toolConfig.functionCallingConfig', 'functionCallingConfig must be an object.');
  const mode = fcc.mode ?? 'AUTO';
  const names = fcc.allowedFunctionNames;
  if (names != null && (!Array.isArray(names) || names.some((n) => typeof n !== 'string'))) {
    throw invalidField('toolConfig.functionCallingConfig.allowedFunctionNames', 'allowedFunctionNames must be an array of function names.');
  }
  if (mode === 'AUTO' || mode === 'MODE_UNSPECIFIED') {
    if (names?.length) throw invalidField('toolConfig.functionCallingConfig.allowedFunctionNames', 'allowedFunctionNames goes with mode ANY: send mode ANY, or leave the names out.');
    return;
  }
  if (mode === 'NONE') {
    out.tool_choice = 'none';
    return;
  }
  if (mode !== 'ANY') throw invalidField('toolConfig.functionCallingConfig.mode', `functionCallingConfig.mode "${String(mode)}" cannot be carried to a model that does not speak Gemini's API: send AUTO, ANY or NONE.`);
  if (!names?.length) {
    out.tool_choice = 'required';
    return;
  }
  const allowed = new Set(names as string[]);
  const kept = (out.tools ?? []).filter((t) => allowed.has(t.function.name));
  if (kept.length === 0) throw invalidField('toolConfig.functionCallingConfig.allowedFunctionNames', 'allowedFunctionNames names no declared function.');
  out.tools = kept;
  out.tool_choice = kept.length === 1 ? { type: 'function', function: { name: kept[0]!.function.name } } : 'required';
}

function convertSafety(settings: unknown): void {
  if (settings == null) return;
  if (!Array.isArray(settings)) throw invalidField('safetySettings', 'safetySettings must be an array.');
  settings.forEach((s, i) => {
    if (!isObject(s) || !NO_FILTERING.has(s.threshold)) {
      throw invalidField(`safetySettings.${i}.threshold`, "Safety thresholds stricter than BLOCK_NONE cannot be carried to a model that does not speak Gemini's API (it applies its own filtering): remove them, or use a gemini target.");
    }
  });
}

function num(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidField(field, `${field} must be a number.`);
  return v;
}

function convertGeneration(config: unknown, out: TranslatedGeminiChatRequest, opts: GeminiToChatOptions): void {
  if (config == null) return;
  if (!isObject(config)) throw invalidField('generationConfig', 'generationConfig must be an object.');
  for (const key of Object.keys(config)) {
    if (!GENERATION_KEYS.has(key)) {
      throw invalidField(`generationConfig.${key}`, `generationConfig.${key} cannot be carried to a model that does not speak Gemini's API: remove it, or use a gemini target.`);
    }
  }
  const g = config;
  if (g.temperature != null) out.temperature = num(g.temperature, 'generationConfig.temperature');
  if (g.topP != null) out.top_p = num(g.topP, 'generationConfig.topP');
  if (g.maxOutputTokens != null) {
    const max = num(g.maxOutputTokens, 'generationConfig.maxOutputTokens');
    if (!Number.isInteger(max) || max < 1) throw invalidField('generationConfig.maxOutputTokens', 'generationConfig.maxOutputTokens must be a positive integer.');
    out[opts.maxTokensField] = opts.maxOutputCap !== undefined ? Math.min(max, opts.maxOutputCap) : max;
  }
  if (g.stopSequences != null) {
    const stop = g.stopSequences;
    if (!Array.isArray(stop) || stop.some((s) => typeof s !== 'string')) throw invalidField('generationConfig.stopSequences', 'stopSequences must be an array of strings.');
    if (stop.length > MAX_STOP_SEQUENCES) throw invalidField('generationConfig.stopSequences', `Chat Completions takes at most ${MAX_STOP_SEQUENCES} stop sequences: send fewer.`);
    if (stop.length > 0) out.stop = stop as string[];
  }
  if (g.candidateCount != null) {
    const n = num(g.candidateCount, 'generationConfig.candidateCount');
    if (n > 1 && opts.stream) throw invalidField('generationConfig.candidateCount', 'A translated stream carries one candidate: send candidateCount 1, or do not stream.');
    if (n > 1) out.n = n;
  }
  if (g.presencePenalty != null) out.presence_penalty = num(g.presencePenalty, 'generationConfig.presencePenalty');
  if (g.frequencyPenalty != null) out.frequency_penalty = num(g.frequencyPenalty, 'generationConfig.frequencyPenalty');
  if (g.seed != null) out.seed = num(g.seed, 'generationConfig.seed');
  if (g.responseLogprobs === true) {
    out.logprobs = true;
    if (g.logprobs != null) out.top_logprobs = num(g.logprobs, 'generationConfig.logprobs');
  }
  // Gemini CLI writes its schemas' types in capitals (OBJECT, STRING): JSON Schema's are lowercase.
  const schema = jsonSchemaOf(g.responseJsonSchema ?? g._responseJsonSchema ?? g.responseSchema);
  const mime = g.responseMimeType;
  if (mime === 'application/json') {
    out.response_format = isObject(schema) ? { type: 'json_schema', json_schema: { name: 'response', schema } } : { type: 'json_object' };
  } else if (mime != null && mime !== 'text/plain') {
    throw invalidField('generationConfig.responseMimeType', `responseMimeType "${String(mime)}" cannot be carried to a model that does not speak Gemini's API: send application/json or text/plain.`);
  } else if (schema !== undefined) {
    throw invalidField('generationConfig.responseSchema', 'A response schema goes with responseMimeType "application/json".');
  }
  const modalities = g.responseModalities;
  if (modalities != null && (!Array.isArray(modalities) || modalities.some((m) => m !== 'TEXT'))) {
    throw invalidField('generationConfig.responseModalities', 'Only TEXT answers can be carried from a model that does not speak Gemini\'s API: send ["TEXT"].');
  }
  const effort = reasoningEffortOf(g.thinkingConfig);
  if (effort && opts.reasons) out.reasoning_effort = effort;
}

/** thinkingLevel or thinkingBudget -> reasoning_effort; a budget of 0 (thinking off) or none leaves the target's default. */
function reasoningEffortOf(thinking: unknown): GeminiReasoningEffort | undefined {
  if (thinking == null) return undefined;
  if (!isObject(thinking)) throw invalidField('generationConfig.thinkingConfig', 'thinkingConfig must be an object.');
  const level = thinking.thinkingLevel;
  if (level != null) {
    switch (String(level).toUpperCase()) {
      case 'MINIMAL':
      case 'LOW':
        return 'low';
      case 'MEDIUM':
        return 'medium';
      case 'HIGH':
        return 'high';
      default:
        throw invalidField('generationConfig.thinkingConfig.thinkingLevel', 'thinkingLevel must be MINIMAL, LOW, MEDIUM or HIGH.');
    }
  }
  const budget = thinking.thinkingBudget;
  if (budget == null || budget === -1 || budget === 0) return undefined;
  const b = num(budget, 'generationConfig.thinkingConfig.thinkingBudget');
  return b < 4096 ? 'low' : b < 16384 ? 'medium' : 'high';
}
