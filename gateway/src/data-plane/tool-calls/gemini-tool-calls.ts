// Gemini: `functionCall` parts, decided; a denied one becomes a text part with the refusal, in its place. Gemini sends a
// call whole in one event, so a stream holds only the event that carries it, until it is decided.
import { type ToolRules, proposedToolCall, refusalSentence } from '../../policy/tool-rules.js';
import type { StreamToolFilter } from './gated-source.js';
import { type ToolGate, frameData, sseFrames, withData } from './gate.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The call of a part, under either spelling Google's parser accepts; null when the part is no call. */
function callOf(part: unknown): Json | null {
  if (!isObject(part)) return null;
  const call = part.functionCall ?? part.function_call;
  return isObject(call) ? call : null;
}

/**
 * Edits a GenerateContentResponse (or one event of its stream) in place: each denied functionCall part is replaced by
 * a text part with the refusal. Returns whether anything changed. A turn left without calls still ends with STOP, as
 * Gemini ends every turn, calls or not.
 */
export async function gateGeminiResponse(response: Json, gate: ToolGate): Promise<boolean> {
  const candidates = response.candidates;
  if (!Array.isArray(candidates)) return false;
  let changed = false;
  for (const candidate of candidates) {
    const content = isObject(candidate) ? candidate.content : undefined;
    const parts = isObject(content) ? content.parts : undefined;
    if (!Array.isArray(parts)) continue;
    for (let i = 0; i < parts.length; i++) {
      const call = callOf(parts[i]);
      if (call === null) continue;
      const name = typeof call.name === 'string' ? call.name : '';
      const args = call.args === undefined ? '{}' : JSON.stringify(call.args);
      const d = await gate.decide(typeof call.id === 'string' ? call.id : '', proposedToolCall(name, args));
      if (d.action === 'allow') continue;
      parts[i] = { text: refusalSentence(name, d) };
      changed = true;
    }
  }
  return changed;
}

/** alt=sse events: an event with a call is decided before it leaves; every other event passes at once. */
export class GeminiToolFilter implements StreamToolFilter {
  constructor(private readonly gate: ToolGate) {}

  push(frame: string): string | Promise<string> {
    // Most events are text: a call's event names it (functionCall, function_call).
    if (!frame.includes('unction')) return frame;
    const data = frameData(frame);
    if (!data) return frame;
    return gateGeminiResponse(data, this.gate).then((changed) => (changed ? withData(frame, data) : frame));
  }

  async close(last: string, _failed: boolean): Promise<string> {
    let out = '';
    for (const frame of sseFrames(last)) {
      const r = this.push(frame);
      out += typeof r === 'string' ? r : await r;
    }
    return out;
  }
}

/**
 * The tools Google runs itself, by the names rules know them by (as the other dialects name the same kind of tool): what
 * they do never comes back as a functionCall, so leaving them out of the request is the only way a rule stops them.
 */
const PROVIDER_TOOLS: Readonly<Record<string, string>> = {
  googleSearch: 'web_search',
  googleSearchRetrieval: 'web_search',
  enterpriseWebSearch: 'web_search',
  exaAiSearch: 'web_search',
  parallelAiSearch: 'web_search',
  retrieval: 'web_search',
  urlContext: 'web_fetch',
  codeExecution: 'code_execution',
  computerUse: 'computer',
  fileSearch: 'file_search',
  googleMaps: 'google_maps',
};

/** A tool member under either spelling (`code_execution`, `codeExecution`) -> its camelCase name. */
const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The body with the function declarations some policy denies outright left out (the same object when none is; a copy
 * otherwise), and so the tools Google runs itself: each kind by its name in PROVIDER_TOOLS (Google Search as
 * `web_search`, URL context as `web_fetch`, code execution as `code_execution`, ...), each of `mcpServers` as
 * `mcp/<name>/*` (Google would call that server's tools itself). A tool entry left empty goes, and allowedFunctionNames
 * loses the names left out. Calls are also never streamed in pieces (streamFunctionCallArguments): a call is decided whole.
 */
export function withoutDeniedGeminiTools(body: Json, rules: ToolRules): Json {
  let out = body;
  const tools = body.tools;
  const denied = new Set<string>();
  if (Array.isArray(tools)) {
    const kept: unknown[] = [];
    let changed = false;
    for (const tool of tools) {
      if (!isObject(tool)) {
        kept.push(tool);
        continue;
      }
      const next: Json = {};
      for (const [key, value] of Object.entries(tool)) {
        if ((key === 'functionDeclarations' || key === 'function_declarations') && Array.isArray(value)) {
          const decls = value.filter((d) => {
            const name = isObject(d) && typeof d.name === 'string' ? d.name : null;
            if (name !== null && rules.deniesOutright(name)) {
              denied.add(name);
              return false;
            }
            return true;
          });
          if (decls.length !== value.length) changed = true;
          if (decls.length > 0) next[key] = decls;
        } else if ((key === 'mcpServers' || key === 'mcp_servers') && Array.isArray(value)) {
          const servers = value.filter((m) => !rules.deniesOutright(`mcp/${String(isObject(m) ? (m.name ?? '') : '')}/*`));
          if (servers.length !== value.length) changed = true;
          if (servers.length > 0) next[key] = servers;
        } else if (Object.hasOwn(PROVIDER_TOOLS, camel(key)) && rules.deniesOutright(PROVIDER_TOOLS[camel(key)]!)) {
          changed = true;
        } else next[key] = value;
      }
      if (Object.keys(next).length > 0) kept.push(next);
    }
    if (changed) {
      out = { ...body };
      if (kept.length > 0) out.tools = kept;
      else delete out.tools;
    }
  }
  const configKey = body.toolConfig !== undefined ? 'toolConfig' : 'tool_config';
  const config = body[configKey];
  if (isObject(config)) {
    const fccKey = config.functionCallingConfig !== undefined ? 'functionCallingConfig' : 'function_calling_config';
    const fcc = config[fccKey];
    if (isObject(fcc)) {
      const next: Json = { ...fcc };
      let changed = false;
      for (const key of ['streamFunctionCallArguments', 'stream_function_call_arguments']) {
        if (next[key] !== undefined) {
          delete next[key];
          changed = true;
        }
      }
      for (const key of ['allowedFunctionNames', 'allowed_function_names']) {
        const names = next[key];
        if (Array.isArray(names) && names.some((n) => denied.has(n as string))) {
          next[key] = names.filter((n) => !denied.has(n as string));
          changed = true;
        }
      }
      if (changed) {
        if (out === body) out = { ...body };
        out[configKey] = { ...config, [fccKey]: next };
      }
    }
  }
  return out;
}
