// Usage of one stream: what the upstream reported, else counted from what was streamed so far (lazily, off the hot path).
import type { Usage } from '../spec.js';
import { countTokens } from './count-tokens.js';

export interface ReportedUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_prompt_tokens?: number;
  cache_write_prompt_tokens?: number;
  cache_write_1h_prompt_tokens?: number;
  reasoning_tokens?: number;
  web_search_calls?: number;
}

export class StreamMeter {
  private prompt: number | undefined;
  private completion: number | undefined;
  private cached: number | undefined;
  private cacheWritten: number | undefined;
  private cacheWritten1h: number | undefined;
  private reasoning: number | undefined;
  private webSearches: number | undefined;
  private promptEstimate: number | undefined;
  private readonly texts: string[] = [];
  private readonly rawChunks: string[] = [];

  /**
   * @param estimatePrompt counts the prompt when the upstream does not
   * @param textOfRawChunk extracts the streamed text of a raw chunk kept by addRawChunk
   */
  constructor(
    private readonly estimatePrompt: () => number,
    private readonly textOfRawChunk: (raw: string) => string = () => '',
  ) {}

  report(usage: ReportedUsage): void {
    if (usage.prompt_tokens !== undefined) this.prompt = usage.prompt_tokens;
    if (usage.completion_tokens !== undefined) this.completion = usage.completion_tokens;
    if (usage.cached_prompt_tokens !== undefined) this.cached = usage.cached_prompt_tokens;
    if (usage.cache_write_prompt_tokens !== undefined) this.cacheWritten = usage.cache_write_prompt_tokens;
    if (usage.cache_write_1h_prompt_tokens !== undefined) this.cacheWritten1h = usage.cache_write_1h_prompt_tokens;
    if (usage.reasoning_tokens !== undefined) this.reasoning = usage.reasoning_tokens;
    if (usage.web_search_calls !== undefined) this.webSearches = usage.web_search_calls;
  }

  /** Text the client received (content, tool names and arguments). */
  addText(text: string): void {
    if (text) this.texts.push(text);
  }

  /** A chunk passed through unparsed; parsed only if its text is ever needed for an estimate. */
  addRawChunk(raw: string): void {
    this.rawChunks.push(raw);
  }

  usage(): Usage {
    const promptKnown = this.prompt !== undefined;
    const completionKnown = this.completion !== undefined;
    const prompt = promptKnown ? this.prompt! : (this.promptEstimate ??= this.estimatePrompt());
    const completion = completionKnown ? this.completion! : this.countStreamed();
    const usage: Usage = { prompt_tokens: prompt, completion_tokens: completion, estimated: !(promptKnown && completionKnown) };
    if (this.cached !== undefined) usage.cached_prompt_tokens = this.cached;
    if (this.cacheWritten !== undefined) usage.cache_write_prompt_tokens = this.cacheWritten;
    if (this.cacheWritten1h !== undefined) usage.cache_write_1h_prompt_tokens = this.cacheWritten1h;
    if (this.reasoning !== undefined) usage.reasoning_tokens = this.reasoning;
    if (this.webSearches !== undefined) usage.web_search_calls = this.webSearches;
    return usage;
  }

  private countStreamed(): number {
    let text = this.texts.join('');
    for (const raw of this.rawChunks) text += this.textOfRawChunk(raw);
    return countTokens(text);
  }
}
