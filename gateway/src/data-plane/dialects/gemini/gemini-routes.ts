// The Gemini routes: POST /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens (the POST forms
// also under /v1/models/), GET /v1beta/models and /v1beta/models/{model}. `{model}` may hold `/` (provider/model) and
// `:` (llama3.1:8b): the method is what follows the last colon.
import { AgentgwError } from '../../../contract/index.js';
import type { DataPlane } from '../../data-plane.js';
import { type Exchange, sendJson } from '../../exchange.js';
import { planFor } from '../../admission.js';
import { allowedModels } from '../../models.js';
import { gemini } from './gemini.js';
import { geminiCountTokens } from './gemini-count-tokens.js';

export type GeminiRoute = 'gemini_generate' | 'gemini_stream' | 'gemini_count' | 'gemini_models' | 'gemini_model';

const METHODS: Record<string, GeminiRoute> = {
  generateContent: 'gemini_generate',
  streamGenerateContent: 'gemini_stream',
  countTokens: 'gemini_count',
};

const BETA_MODELS = '/v1beta/models';
const V1_MODELS = '/v1/models/';

/** The route of a path (no query, no trailing slash), or null when it is none of the Gemini routes. */
export function geminiRoute(method: string | undefined, path: string): GeminiRoute | null {
  let rest: string;
  if (path === BETA_MODELS) return method === 'GET' || method === 'HEAD' ? 'gemini_models' : null;
  if (path.startsWith(`${BETA_MODELS}/`)) rest = path.slice(BETA_MODELS.length + 1);
  else if (path.startsWith(V1_MODELS)) rest = path.slice(V1_MODELS.length);
  else return null;
  const colon = rest.lastIndexOf(':');
  const call = colon > 0 ? METHODS[rest.slice(colon + 1)] : undefined;
  if (call !== undefined) return method === 'POST' ? call : null;
  // GET forms only under /v1beta: GET /v1/models/... stays OpenAI's.
  return path.startsWith(BETA_MODELS) && rest !== '' && (method === 'GET' || method === 'HEAD') ? 'gemini_model' : null;
}

/** The model, method and stream form of a Gemini route's URL. */
export function geminiRouteOf(url: string): { model: string; method: string; sse: boolean } {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  if (path.endsWith('/')) path = path.slice(0, -1);
  const rest = path.startsWith(`${BETA_MODELS}/`) ? path.slice(BETA_MODELS.length + 1) : path.slice(V1_MODELS.length);
  const colon = rest.lastIndexOf(':');
  const known = colon > 0 && METHODS[rest.slice(colon + 1)] !== undefined;
  const encoded = known ? rest.slice(0, colon) : rest;
  let model: string;
  try {
    model = decodeURIComponent(encoded);
  } catch {
    throw new AgentgwError('validation_failed', 'The model in the path is not valid percent-encoding: send it as provider/model or an alias.', { param: 'model' });
  }
  // Google's resource names: models/{id}. The SDKs send the bare id; a client that repeats the prefix means the same.
  if (model.startsWith('models/')) model = model.slice(7);
  if (model === '') throw new AgentgwError('validation_failed', 'The path names no model: send /v1beta/models/{model}:generateContent.', { param: 'model' });
  const sse = q !== -1 && new URLSearchParams(url.slice(q + 1)).get('alt') === 'sse';
  return { model, method: known ? rest.slice(colon + 1) : '', sse };
}

/** The POST forms (async: a bad path is a rejection the caller answers, never a throw out of the body's end event). */
export async function geminiDispatch(dp: DataPlane, ex: Exchange, body: unknown, which: 'gemini_generate' | 'gemini_stream' | 'gemini_count'): Promise<void> {
  const { model, sse } = geminiRouteOf(ex.req.url ?? '');
  if (which === 'gemini_count') return geminiCountTokens(dp, ex, body, model);
  return await gemini(dp, ex, body, { model, method: which === 'gemini_stream' ? 'streamGenerateContent' : 'generateContent', sse });
}

const METHODS_SERVED = ['generateContent', 'streamGenerateContent', 'countTokens'];

function modelResource(id: string, ownedBy: string): Record<string, unknown> {
  return {
    name: `models/${id}`,
    baseModelId: id,
    version: '1',
    displayName: id,
    description: `Served by agentgw (${ownedBy}).`,
    supportedGenerationMethods: METHODS_SERVED,
  };
}

/**
 * GET /v1beta/models and /v1beta/models/{model}: the models and aliases the agent's policies allow, in Google's format
 * (as GET /v1/models lists them in OpenAI's). A model outside them is 404, as Google answers an unknown one.
 */
export function geminiModels(dp: DataPlane, ex: Exchange, one: boolean): void {
  const list = allowedModels(dp, ex.ctx);
  if (!one) {
    sendJson(ex, 200, JSON.stringify({ models: list.map((m) => modelResource(m.id, m.owned_by)) }));
    return;
  }
  const id = geminiRouteOf(ex.req.url ?? '').model;
  const found = list.find((m) => m.id === id) ?? routed(dp, ex, id);
  if (!found) throw new AgentgwError('route_not_found', `Model ${id} is not one this agent may use: list them with GET /v1beta/models.`, { param: 'model' });
  sendJson(ex, 200, JSON.stringify(modelResource(id, found.owned_by)));
}

/** A model id no list names that a request could still use (a bare id a glob alias matches, a provider's unlisted model). */
function routed(dp: DataPlane, ex: Exchange, id: string): { owned_by: string } | undefined {
  try {
    const plan = planFor(dp, ex.ctx, id);
    return plan.priced.length > 0 ? { owned_by: plan.priced[0]!.provider.name } : undefined;
  } catch {
    return undefined;
  }
}
