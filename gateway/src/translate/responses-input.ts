// Responses input items -> OpenAI chat messages. Consecutive function calls become one assistant message with tool_calls,
// their outputs tool messages; earlier reasoning and records of tools OpenAI ran are left out.
import type {
  OpenAIAssistantMessage,
  OpenAIChatMessage,
  OpenAIContentPart,
  OpenAIImagePart,
  OpenAIToolCall,
} from '../providers/openai-format.js';
import { invalidField, isObject } from './invalid-field.js';
import { CLIENT_BUILT_IN_ITEM_TYPES, SERVER_TOOL_ITEM_TYPES } from './responses-api.js';
import { chatToolName } from './responses-tools.js';
import { type ThinkingBlock, decodeThinkingBlocks } from './carried-thinking.js';

const TARGET = 'the target provider';
const SERVER_ITEMS: ReadonlySet<string> = new Set(SERVER_TOOL_ITEM_TYPES);
const CLIENT_BUILT_IN_ITEMS: ReadonlySet<string> = new Set(CLIENT_BUILT_IN_ITEM_TYPES);

/** Item types left out of the upstream call on purpose (reported, never an error). */
export const DROPPED_ITEM_TYPES: ReadonlySet<string> = new Set(['reasoning', 'compaction', ...SERVER_TOOL_ITEM_TYPES]);

/**
 * Converts a list of items. `at(i)` names item i in error messages (`input.3`, or where history items came from).
 * Appends to `out`, so that history and input make one conversation (a function call in the history may be answered by
 * an output in the input).
 */
export class ChatMessagesBuilder {
  readonly out: OpenAIChatMessage[] = [];
  /** The assistant message being built: text and the tool calls that follow it. */
  private assistant: OpenAIAssistantMessage | null = null;
  /** Images and files of tool outputs, sent in a user message after the run of tool messages (tool messages are text). */
  private deferred: OpenAIContentPart[] = [];
  /** Call ids of the calls so far: an output answers one of them (chat targets refuse an orphan tool message). */
  private readonly calls = new Set<string>();
  /** Claude's thinking of a reasoning item, for the assistant message that follows it. */
  private thinking: ThinkingBlock[] | null = null;

  /** `carryThinking`: the target is Claude, which takes back the thinking blocks of its earlier answers. */
  constructor(private readonly carryThinking = false) {}

  add(items: unknown, at: (i: number) => string): void {
    if (!Array.isArray(items)) throw invalidField(at(-1), `${at(-1)} must be an array of items.`);
    items.forEach((item, i) => this.item(item, at(i)));
  }

  /** A plain string input: one user message. */
  addText(text: string): void {
    this.flush();
    this.out.push({ role: 'user', content: text });
  }

  /** Every message, the last assistant message and deferred parts included. */
  finish(): OpenAIChatMessage[] {
    this.flush();
    return this.out;
  }

  private item(item: unknown, at: string): void {
    if (!isObject(item)) throw invalidField(at, `${at} must be an item object (a message, function_call, function_call_output, ...).`);
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (typeof type !== 'string') throw invalidField(`${at}.type`, `${at}.type must name the item's type ("message", "function_call", "function_call_output", ...).`);
    switch (type) {
      case 'message':
        this.message(item, at);
        return;
      case 'function_call':
      case 'custom_tool_call':
        this.call(item, type, at);
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
        this.callOutput(item, at);
        return;
      case 'reasoning':
        this.reasoning(item, at);
        return;
      case 'item_reference':
        throw invalidField(at, `${at} is an item_reference, which agentgw cannot resolve for ${TARGET}; send the item itself, or continue the conversation with previous_response_id.`);
      default:
        if (DROPPED_ITEM_TYPES.has(type)) return;
        if (CLIENT_BUILT_IN_ITEMS.has(type)) {
          throw invalidField(at, `${at} is a "${type}" item of a built-in tool that only OpenAI's models call; ${TARGET} cannot take it: remove it (or send its outcome as text), or route this conversation to an OpenAI model.`);
        }
        throw invalidField(`${at}.type`, `${at}.type "${type}" is not an item type ${TARGET} can take; send message, function_call, function_call_output, custom_tool_call or custom_tool_call_output items.`);
    }
  }

  /**
   * Earlier reasoning: Claude's own thinking (carried in encrypted_content) goes back to a Claude target before the
   * message or calls it led to; any other reasoning, and Claude's for another target, is left out.
   */
  private reasoning(item: Record<string, unknown>, at: string): void {
    if (!this.carryThinking) return;
    const blocks = decodeThinkingBlocks(item.encrypted_content, `${at}.encrypted_content`);
    if (!blocks) return;
    // Reasoning starts an answer: what came before it is another turn.
    this.flushAssistant();
    this.thinking = blocks;
  }

  /** A new assistant message, with the thinking that led to it. */
  private newAssistant(content: string | null): OpenAIAssistantMessage {
    const message: OpenAIAssistantMessage = { role: 'assistant', content };
    if (this.thinking) message.thinking_blocks = this.thinking;
    this.thinking = null;
    return message;
  }

  private message(item: Record<string, unknown>, at: string): void {
    const { role, content } = item;
    if (content == null || (Array.isArray(content) && content.length === 0)) {
      throw invalidField(`${at}.content`, `${at}.content is empty; give the message a string or at least one content part.`);
    }
    if (typeof content !== 'string' && !Array.isArray(content)) throw invalidField(`${at}.content`, `${at}.content must be a string or an array of content parts.`);
    switch (role) {
      case 'user': {
        this.flush();
        const parts = typeof content === 'string' ? content : userParts(content, `${at}.content`);
        this.out.push({ role: 'user', content: parts });
        return;
      }
      case 'system':
      case 'developer': {
        this.flush();
        // Both are system messages for a translated call: developer is OpenAI's name for it on reasoning models.
        this.out.push({ role: 'system', content: typeof content === 'string' ? content : systemText(content, `${at}.content`) });
        return;
      }
      case 'assistant': {
        const text = typeof content === 'string' ? content : assistantText(content, `${at}.content`);
        // A message after tool calls starts a new assistant turn; text before tool calls shares their message.
        if (this.assistant?.tool_calls?.length || (this.assistant && this.assistant.content)) this.flush();
        this.flushDeferred();
        this.assistant = this.newAssistant(text || null);
        return;
      }
      default:
        throw invalidField(`${at}.role`, `${at}.role must be "user", "assistant", "system" or "developer".`);
    }
  }

  private call(item: Record<string, unknown>, type: 'function_call' | 'custom_tool_call', at: string): void {
    const { call_id: callId, name, namespace } = item;
    if (typeof callId !== 'string' || !callId) throw invalidField(`${at}.call_id`, `${at}.call_id must be the call's id (a non-empty string).`);
    if (typeof name !== 'string' || !name) throw invalidField(`${at}.name`, `${at}.name must be the tool's name (a non-empty string).`);
    if (namespace != null && typeof namespace !== 'string') throw invalidField(`${at}.namespace`, `${at}.namespace must be a string.`);
    let args: string;
    if (type === 'function_call') {
      if (typeof item.arguments !== 'string') throw invalidField(`${at}.arguments`, `${at}.arguments must be the call's arguments as a JSON text.`);
      args = item.arguments;
    } else {
      if (typeof item.input !== 'string') throw invalidField(`${at}.input`, `${at}.input must be the call's input text.`);
      // As the custom tool was offered to the target: a function of one string argument.
      args = JSON.stringify({ input: item.input });
    }
    this.flushDeferred();
    const call: OpenAIToolCall = { id: callId, type: 'function', function: { name: chatToolName(name, namespace as string | undefined), arguments: args } };
    if (!this.assistant) this.assistant = this.newAssistant(null);
    (this.assistant.tool_calls ??= []).push(call);
    this.calls.add(callId);
  }

  private callOutput(item: Record<string, unknown>, at: string): void {
    const { call_id: callId, output } = item;
    if (typeof callId !== 'string' || !callId) throw invalidField(`${at}.call_id`, `${at}.call_id must be the id of the call it answers.`);
    if (!this.calls.has(callId)) {
      throw invalidField(`${at}.call_id`, `No function_call or custom_tool_call with call_id "${callId}" comes before ${at}: a tool output answers a call made earlier in the conversation.`);
    }
    this.flushAssistant();
    let text: string;
    if (typeof output === 'string') text = output;
    else if (Array.isArray(output)) {
      const texts: string[] = [];
      const media: OpenAIContentPart[] = [];
      output.forEach((part, k) => {
        const param = `${at}.output.${k}`;
        const converted = inputPart(part, param);
        if (converted.type === 'text') texts.push(converted.text);
        else media.push(converted);
      });
      if (media.length > 0) {
        // Chat tool messages hold only text: the images and files follow in a user message.
        texts.push(`(${media.length === 1 ? 'an attachment follows' : `${media.length} attachments follow`} in the next user message)`);
        this.deferred.push({ type: 'text', text: `Attachments of the result of tool call ${callId}:` }, ...media);
      }
      text = texts.join('\n\n');
    } else {
      throw invalidField(`${at}.output`, `${at}.output must be a string or an array of input_text, input_image and input_file parts.`);
    }
    this.out.push({ role: 'tool', tool_call_id: callId, content: text });
  }

  private flushAssistant(): void {
    if (this.assistant) {
      // An empty assistant message says nothing, and targets refuse one.
      if (this.assistant.content || this.assistant.tool_calls?.length) this.out.push(this.assistant);
      this.assistant = null;
    }
  }

  private flushDeferred(): void {
    if (this.deferred.length > 0) {
      this.out.push({ role: 'user', content: this.deferred });
      this.deferred = [];
    }
  }

  private flush(): void {
    this.flushAssistant();
    this.flushDeferred();
  }
}

function partType(part: unknown, param: string): string {
  if (!isObject(part) || typeof part.type !== 'string') throw invalidField(param, `${param} must be a content part object with a "type".`);
  return part.type;
}

function textOf(part: unknown, param: string): string {
  const text = (part as { text?: unknown }).text;
  if (typeof text !== 'string') throw invalidField(`${param}.text`, `${param}.text must be a string.`);
  return text;
}

/** A user-side part: input_text, input_image or input_file. */
function inputPart(part: unknown, param: string): OpenAIContentPart {
  const type = partType(part, param);
  const p = part as Record<string, unknown>;
  switch (type) {
    case 'input_text':
      return { type: 'text', text: textOf(part, param) };
    case 'input_image': {
      if (p.file_id != null && p.image_url == null) {
        throw invalidField(`${param}.file_id`, `${param}.file_id is an id of OpenAI's Files API, which ${TARGET} cannot read; send the image as image_url (a URL or a data: URL).`);
      }
      if (typeof p.image_url !== 'string' || !p.image_url) throw invalidField(`${param}.image_url`, `${param}.image_url must be the image's URL or data: URL.`);
      const image: OpenAIImagePart = { type: 'image_url', image_url: { url: p.image_url } };
      if (p.detail === 'low' || p.detail === 'high' || p.detail === 'auto') image.image_url.detail = p.detail;
      return image;
    }
    case 'input_file': {
      if (typeof p.file_data === 'string' && p.file_data) {
        const filename = typeof p.filename === 'string' && p.filename ? p.filename : 'document.pdf';
        // The Responses API takes a data: URL or bare base64; chat file parts take a data: URL.
        const data = p.file_data.startsWith('data:') ? p.file_data : `data:application/pdf;base64,${p.file_data}`;
        return { type: 'file', file: { filename, file_data: data } };
      }
      if (p.file_url != null) {
        throw invalidField(`${param}.file_url`, `${param}.file_url is a URL; ${TARGET} cannot fetch files: send the file's content as file_data (a base64 data: URL).`);
      }
      if (p.file_id != null) {
        throw invalidField(`${param}.file_id`, `${param}.file_id is an id of OpenAI's Files API, which ${TARGET} cannot read; send the file's content as file_data (a base64 data: URL).`);
      }
      throw invalidField(param, `${param} must carry the file as file_data (a base64 data: URL) with a filename.`);
    }
    default:
      throw invalidField(`${param}.type`, `${param}.type "${type}" is not an input part; send input_text, input_image or input_file parts.`);
  }
}

function userParts(content: unknown[], at: string): string | OpenAIContentPart[] {
  const parts = content.map((part, j) => {
    const param = `${at}.${j}`;
    // Clients replaying earlier output sometimes label user text output_text.
    if (partType(part, param) === 'output_text') return { type: 'text', text: textOf(part, param) } as OpenAIContentPart;
    return inputPart(part, param);
  });
  return parts.length === 1 && parts[0].type === 'text' ? parts[0].text : parts;
}

function systemText(content: unknown[], at: string): string {
  return content.map((part, j) => {
    const param = `${at}.${j}`;
    const type = partType(part, param);
    if (type === 'input_text' || type === 'output_text') return textOf(part, param);
    throw invalidField(param, `${param} is an "${type}" part; system and developer messages take only text (input_text) for ${TARGET}: move it to a user message.`);
  }).join('\n\n');
}

/** An assistant message's text: output_text (and input_text) joined as written; a refusal is what the model said. */
function assistantText(content: unknown[], at: string): string {
  let text = '';
  content.forEach((part, j) => {
    const param = `${at}.${j}`;
    const type = partType(part, param);
    if (type === 'output_text' || type === 'input_text') text += textOf(part, param);
    else if (type === 'refusal') {
      const refusal = (part as { refusal?: unknown }).refusal;
      if (typeof refusal !== 'string') throw invalidField(`${param}.refusal`, `${param}.refusal must be a string.`);
      text += refusal;
    } else {
      throw invalidField(param, `${param} is an "${type}" part; assistant messages take output_text and refusal parts.`);
    }
  });
  return text;
}
