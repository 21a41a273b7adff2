// Responses agentgw keeps (store: true): the conversation behind previous_response_id, and GET / DELETE / input_items.
import { randomBytes } from 'node:crypto';
import { AgentgwError } from '../../../contract/index.js';
import { InputItemsQuery, RESPONSE_ID, type ResponsesRequest } from '../../../contract/responses-request.js';
import { storeUnavailableError } from '../../../contract/errors.js';
import type { StoredResponse } from '../../../storage/store.js';
import type { DataPlane } from '../../data-plane.js';
import { type Exchange, sendJson } from '../../exchange.js';
import type { RequestContext } from '../../request-context.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `resp_` and 48 hex digits, as OpenAI's ids look. */
export function newResponseId(): string {
  return `resp_${randomBytes(24).toString('hex')}`;
}

/** The input as items: a string is one user message. */
export function inputItems(input: ResponsesRequest['input']): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

/** A store failure while a request waits is the database being away: 503, retry. */
async function fromStore<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof AgentgwError) throw e;
    throw storeUnavailableError('Stored responses cannot be read right now');
  }
}

/** The stored response, if this agent made it (any other caller is told it does not exist). */
async function ownResponse(dp: DataPlane, ctx: RequestContext, id: string): Promise<StoredResponse | undefined> {
  if (!RESPONSE_ID.test(id)) return undefined;
  const stored = await fromStore(() => dp.responses.getResponse(id));
  return stored && stored.agent_id === ctx.agent.id ? stored : undefined;
}

/**
 * Output items given back as input on the next turn. Reasoning that carries no encrypted_content can only be read by
 * the provider account that stored it, and is left out (the answer it led to is kept).
 */
function outputAsInput(output: unknown): unknown[] {
  if (!Array.isArray(output)) return [];
  return output.filter((item) => !(isObject(item) && item.type === 'reasoning' && typeof item.encrypted_content !== 'string'));
}

/**
 * The request with previous_response_id replaced by the conversation it continues: the stored input and output of that
 * response, then this request's input. Every target gets the whole conversation, whichever provider answered before.
 */
export async function withConversation(dp: DataPlane, ctx: RequestContext, body: ResponsesRequest): Promise<ResponsesRequest> {
  const previous = body.previous_response_id;
  if (previous == null) return body;
  const stored = await ownResponse(dp, ctx, previous);
  if (!stored) {
    throw new AgentgwError(
      'validation_failed',
      `previous_response_id ${previous} is not a response this agent stored (unknown, deleted, expired or made with store: false): send the whole conversation as input instead.`,
      { param: 'previous_response_id' },
    );
  }
  const history = [...(JSON.parse(stored.input) as unknown[]), ...outputAsInput((JSON.parse(stored.response) as Json).output)];
  const { previous_response_id: _, ...rest } = body;
  return { ...rest, input: [...history, ...inputItems(body.input)] as ResponsesRequest['input'] };
}

export interface ToStore {
  id: string;
  ctx: RequestContext;
  /** The model the client asked for. */
  model: string;
  providerType: string;
  /** The whole conversation's input, as admitted (redacted where a policy redacts). */
  input: unknown[];
  response: Json;
}

/**
 * Keeps a response for previous_response_id and GET. Called before the answer's last bytes, so a client that continues
 * at once finds it; a store that is away loses only the ability to continue (the answer was given and billed).
 */
export async function keepResponse(dp: DataPlane, ex: Exchange, r: ToStore): Promise<void> {
  try {
    await dp.responses.putResponse({
      id: r.id,
      tenant_id: r.ctx.agent.tenant_id,
      agent_id: r.ctx.agent.id,
      trace_id: r.ctx.traceId,
      request_id: r.ctx.requestId,
      model: r.model,
      provider_type: r.providerType,
      created_at: new Date().toISOString(),
      input: JSON.stringify(r.input),
      response: JSON.stringify(r.response),
    });
  } catch (err) {
    // The stored text never reaches the log: only the id and the failure.
    ex.log?.error({ err: err instanceof Error ? { message: err.message } : String(err), response_id: r.id }, 'could not store a response');
  }
}

function notFound(id: string): AgentgwError {
  return new AgentgwError('response_not_found', `No stored response ${id} for this agent: it was never stored (store: false), was deleted or expired.`, { param: 'response_id' });
}

/** GET /v1/responses/{id} */
export async function getResponse(dp: DataPlane, ex: Exchange, id: string): Promise<void> {
  const stored = await ownResponse(dp, ex.ctx, id);
  if (!stored) throw notFound(id);
  sendJson(ex, 200, stored.response);
}

/** DELETE /v1/responses/{id} */
export async function deleteResponse(dp: DataPlane, ex: Exchange, id: string): Promise<void> {
  const stored = await ownResponse(dp, ex.ctx, id);
  if (!stored || !(await fromStore(() => dp.responses.deleteResponse(id)))) throw notFound(id);
  sendJson(ex, 200, JSON.stringify({ id, object: 'response', deleted: true }));
}

const ID_PREFIX: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', custom_tool_call: 'ctc', custom_tool_call_output: 'ctco', reasoning: 'rs' };

/** An input item as listed: with an id (items sent without one get a stable one) and `type`. */
function listedItem(item: unknown, responseId: string, n: number): Json {
  const it: Json = isObject(item) ? { ...item } : { value: item };
  it.type ??= 'message';
  if (it.type === 'message' && typeof it.content === 'string') it.content = [{ type: it.role === 'assistant' ? 'output_text' : 'input_text', text: it.content }];
  if (typeof it.id !== 'string') it.id = `${ID_PREFIX[it.type as string] ?? 'item'}_${responseId.slice('resp_'.length)}_in${n}`;
  return { id: it.id, ...it };
}

/** GET /v1/responses/{id}/input_items: the conversation's input items, newest first unless order=asc. */
export async function listInputItems(dp: DataPlane, ex: Exchange, id: string, query: URLSearchParams): Promise<void> {
  const q = InputItemsQuery.safeParse(Object.fromEntries(query));
  if (!q.success) {
    const issue = q.error.issues[0]!;
    const field = issue.path.join('.') || String((issue as { keys?: string[] }).keys?.[0] ?? '');
    if (!field) throw new AgentgwError('validation_failed', 'A query parameter has an empty name: send limit, order, after, before or include.', { param: 'query' });
    throw new AgentgwError('validation_failed', `Invalid query parameter ${JSON.stringify(field)}: ${issue.message}.`, { param: field });
  }
  const stored = await ownResponse(dp, ex.ctx, id);
  if (!stored) throw notFound(id);
  const all = (JSON.parse(stored.input) as unknown[]).map((item, n) => listedItem(item, id, n));
  if (q.data.order === 'desc') all.reverse();
  let from = 0;
  let to = all.length;
  if (q.data.after !== undefined) from = all.findIndex((i) => i.id === q.data.after) + 1;
  if (q.data.before !== undefined) {
    const at = all.findIndex((i) => i.id === q.data.before);
    if (at !== -1) to = at;
  }
  const page = all.slice(from, Math.max(from, to)).slice(0, q.data.limit);
  const hasMore = from + page.length < to;
  sendJson(ex, 200, JSON.stringify({ object: 'list', data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: hasMore }));
}
