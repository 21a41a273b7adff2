// A test upstream that keeps a prompt cache the way Anthropic's is documented to work, for Messages (POST /v1/messages)
// and Converse (POST /model/{id}/converse): the prompt is read as tools, system, then message blocks; a request reads
// from the cache the prefix up to the previous request's last breakpoint (cache_control, or a cachePoint block) when
// its own prompt starts with that prefix byte for byte (breakpoint markers aside), and writes the prefix up to its own
// last breakpoint when that is at least `minTokens` long. Token counts are the o200k tokenizer's on each block's JSON.
import { countTokens } from '../../tokenizer/o200k.js';
import type { RecordedRequest } from './fake-upstream.js';

/** The cache arithmetic of one request, as the upstream reported it. */
export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

const withoutMarkers = (value: unknown) => JSON.stringify(value, (k, v) => (k === 'cache_control' ? undefined : v));

/** Anthropic Messages: the blocks of the prompt in reading order, each with whether a breakpoint ends on it. */
function messagesPrompt(body: any): Array<{ text: string; breakpoint: boolean }> {
  const out: Array<{ text: string; breakpoint: boolean }> = [];
  for (const tool of body.tools ?? []) out.push({ text: `tool ${withoutMarkers(tool)}`, breakpoint: tool.cache_control != null });
  const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
  for (const block of system) out.push({ text: `system ${withoutMarkers(block)}`, breakpoint: block.cache_control != null });
  for (const message of body.messages ?? []) {
    const content = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const block of content) out.push({ text: `${message.role} ${withoutMarkers(block)}`, breakpoint: block.cache_control != null });
  }
  return out;
}

/** Converse: the same, a cachePoint block marking the block before it. */
function conversePrompt(body: any): Array<{ text: string; breakpoint: boolean }> {
  const out: Array<{ text: string; breakpoint: boolean }> = [];
  const add = (prefix: string, blocks: any[]) => {
    for (const block of blocks) {
      if (block.cachePoint) {
        if (out.length > 0) out[out.length - 1]!.breakpoint = true;
      } else out.push({ text: `${prefix} ${JSON.stringify(block)}`, breakpoint: false });
    }
  };
  add('tool', body.toolConfig?.tools ?? []);
  add('system', body.system ?? []);
  for (const message of body.messages ?? []) add(message.role, message.content);
  return out;
}

export class PromptCacheUpstream {
  /** The prefix the last request wrote, block by block, and its token count. */
  private cached: { blocks: string[]; tokens: number } | undefined;
  /** What each request was told, in order. */
  readonly reported: CacheUsage[] = [];

  constructor(private readonly minTokens = 1024) {}

  /** The cache usage of `req`, updating the cache as the upstream would. */
  account(req: RecordedRequest): CacheUsage {
    const body = req.json();
    const prompt = req.url.endsWith('/converse') || req.url.endsWith('/converse-stream') ? conversePrompt(body) : messagesPrompt(body);
    const tokens = prompt.map((b) => countTokens(b.text));
    const total = tokens.reduce((a, b) => a + b, 0);
    const hit = this.cached && this.cached.blocks.length <= prompt.length && this.cached.blocks.every((text, i) => prompt[i]!.text === text);
    const read = hit ? this.cached!.tokens : 0;
    let write = 0;
    const last = prompt.findLastIndex((b) => b.breakpoint);
    if (last >= 0) {
      const upTo = tokens.slice(0, last + 1).reduce((a, b) => a + b, 0);
      if (upTo >= this.minTokens) {
        write = Math.max(0, upTo - read);
        this.cached = { blocks: prompt.slice(0, last + 1).map((b) => b.text), tokens: upTo };
      }
    }
    const usage = { input_tokens: total - read - write, cache_read_input_tokens: read, cache_creation_input_tokens: write };
    this.reported.push(usage);
    return usage;
  }
}
