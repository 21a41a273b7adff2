// Agent-sized requests: a recorded Claude Code request (about 76 KB, 24 tools) as Anthropic Messages, and the same
// conversation recast as Chat Completions, so every dialect is measured on a body of the same size.
import { readFileSync } from 'node:fs';
import { messagesToChatRequest } from '../../gateway/dist/translate/messages-to-chat-request.js';

const FIXTURE = new URL('../../gateway/src/data-plane/dialects/messages/__fixtures__/claude-code-request.json', import.meta.url);
/** Replaced by a request counter, so no two requests are the same (retry_block must never trip). */
const MARK = '@@BENCH_N@@';

/** The native model (an Anthropic provider on the mock) and the OpenAI-format one (chat, and messages translated). */
export const AGENT_MODELS = { anthropic: 'anthropic/claude-sonnet-4-5', openai: 'openai/gpt-4o-mini' };

function recorded() {
  const body = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  const first = body.messages[0];
  const blocks = typeof first.content === 'string' ? [{ type: 'text', text: first.content }] : first.content;
  blocks[blocks.length - 1].text += ` (step ${MARK})`;
  first.content = blocks;
  return body;
}

/** Body templates split at the counter mark: a request is parts.join(counter), with no JSON work per request. */
function template(body) {
  return JSON.stringify(body).split(MARK);
}

let counter = 0;

/**
 * The three agent workloads, each streamed or not: Chat Completions on the recast conversation, Messages native
 * (Anthropic upstream) and Messages translated (OpenAI-format upstream), on the recorded Claude Code request.
 */
export function agentWorkloads() {
  const messages = recorded();
  const chat = messagesToChatRequest(messages, { model: AGENT_MODELS.openai, maxTokensField: 'max_tokens', reasons: false });
  const build = (body, model, path) => ({
    path,
    stream: template({ ...body, model, stream: true, ...(path.endsWith('completions') ? { stream_options: { include_usage: true } } : {}) }),
    plain: template({ ...body, model, stream: false }),
  });
  return [
    { name: 'chat.completions', ...build(chat, AGENT_MODELS.openai, '/v1/chat/completions') },
    { name: 'messages native', ...build(messages, AGENT_MODELS.anthropic, '/v1/messages') },
    { name: 'messages translated', ...build(messages, AGENT_MODELS.openai, '/v1/messages') },
  ];
}

/** One request body of a workload. */
export function agentBody(workload, stream) {
  const n = counter++;
  return { n, json: (stream ? workload.stream : workload.plain).join(String(n)) };
}

export const AGENT_POLICY = {
  tenant_id: 'bench',
  monthly_budget: 1_000_000,
  daily_budget: 100_000,
  allowed_models: ['openai/gpt-4o*', 'anthropic/claude-*'],
  rules: {
    pii: 'block',
    retry_block: { max_repeats: 3, window_seconds: 300 },
    // An agent-sized request's worst case is about $1.5 (77k prompt tokens, 64k output); the cap stays on, above it.
    max_cost_per_request: 10,
    max_cost_per_trace: 1_000_000,
    rpm: 1_000_000_000,
    tpm: 1_000_000_000_000,
  },
};
