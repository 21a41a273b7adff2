// Responses agentgw keeps (store: true): the conversation behind previous_response_id, and GET / DELETE / input_items.
import { randomHex } from '../../../http/random-hex.js';
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
  return `resp_${randomHex(24)}`;
}

/** The input as items: a string is one user message. */
export function inputItems(input: ResponsesRequest['input']): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

/** The header of an answer whose response could not be stored, although the client asked for it (store: true). */
export const STORED_HEADER = 'x-agentgw-response-stored';

/** CONTRACT's 503 for a stored turn, or a read, while the database is down. */
function storeDown(): AgentgwError {
  return storeUnavailableError('Stored responses cannot be kept or read right now, as the database is unreachable (send store: false, with the whole conversation as input, to go on without it)');
}

/**
 * A turn that would be stored (store is true by default) or continues a stored one, while the database is known to be
 * down: 503 at once, before any upstream call, instead of an answer that cannot be kept.
 */
export function refuseWhileStoreDown(dp: DataPlane, body: ResponsesRequest): void {
  if ((body.store !== false || body.previous_response_id != null) && !dp.responses.reachable) throw storeDown();
}

/** A store failure while a request waits is the database being away: 503, retry (at once while it is known to be down). */
async function fromStore<T>(dp: DataPlane, op: () => Promise<T>): Promise<T> {
  if (!dp.responses.reachable) throw storeDown();
  try {
    return await op();
  } catch (e) {
    if (e instanceof AgentgwError) throw e;
    throw storeUnavailableError('Stored responses cannot be read right now');
  }
}

/** The stored response (or the mark of one that could not be stored), if this agent made it; to anyone else it does not exist. */
async function ownResponse(dp: DataPlane, ctx: RequestContext, id: string): Promise<StoredResponse | undefined> {
  if (!RESPONSE_ID.test(id)) return undefined;
  const stored = await fromStore(dp, () => dp.responses.getResponse(id));
  return stored && stored.agent_id === ctx.agent.id ? stored : undefined;
}

/** The 404 of a response that was answered but not stored: why, and what to do instead. */
function notStored(id: string, mark: StoredResponse, param: string): AgentgwError {
  return new AgentgwError(
    'response_not_found',
    `Response ${id} was answered but not stored: ${mark.not_stored ?? 'the database could not keep it'}. Its answer said so (store: false, header ${STORED_HEADER}: false): send the whole conversation as input instead.`,
    { param },
  );
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
  if (stored?.not_stored != null) throw notStored(previous, stored, 'previous_response_id');
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
 * at once finds it. False when it could not be stored: the answer is given all the same (it was made and billed), and
 * says so (notStoredResponse, notStoredEvents); the store remembers the id as not stored, so a later read says why it
 * is missing.
 */
export async function keepResponse(dp: DataPlane, ex: Exchange, r: ToStore): Promise<boolean> {
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
    return true;
  } catch (err) {
    // The stored text never reaches the log: only the id and the failure.
    ex.log?.error({ err: err instanceof Error ? { message: err.message } : String(err), response_id: r.id }, 'could not store a response');
    return false;
  }
}

/** A response object as answered when it could not be stored: `store: false`, as for a turn sent with it. */
export function notStoredResponse(response: Json): Json {
  return { ...response, store: false };
}

/**
 * Stream events that end a turn whose response could not be stored: each event's `response` object says `store: false`
 * (the headers are long gone; the terminal event is where a client reads the final response).
 */
export function notStoredEvents(frames: string): string {
  return frames
    .split('\n\n')
    .map((frame) => {
      const lines = frame.split('\n');
      const at = lines.findIndex((l) => l.startsWith('data: '));
      if (at === -1) return frame;
      let event: unknown;
      try {
        event = JSON.parse(lines[at]!.slice('data: '.length));
      } catch {
        return frame;
      }
      if (!isObject(event) || !isObject(event.response)) return frame;
      lines[at] = `data: ${JSON.stringify({ ...event, response: notStoredResponse(event.response) })}`;
      return lines.join('\n');
    })
    .join('\n\n');
}

function notFound(id: string): AgentgwError {
  return new AgentgwError('response_not_found', `No stored response ${id} for this agent: it was never stored (store: false), was deleted or expired.`, { param: 'response_id' });
}

/** The agent's stored response of that id, else a 404 (saying why when it was answered but not stored). */
async function readable(dp: DataPlane, ctx: RequestContext, id: string): Promise<StoredResponse> {
  const stored = await ownResponse(dp, ctx, id);
  if (!stored) throw notFound(id);
  if (stored.not_stored != null) throw notStored(id, stored, 'response_id');
  return stored;
}

/** GET /v1/responses/{id} */
export async function getResponse(dp: DataPlane, ex: Exchange, id: string): Promise<void> {
  const stored = await readable(dp, ex.ctx, id);
  sendJson(ex, 200, stored.response);
}

/** DELETE /v1/responses/{id} */
export async function deleteResponse(dp: DataPlane, ex: Exchange, id: string): Promise<void> {
  await readable(dp, ex.ctx, id);
  if (!(await fromStore(dp, () => dp.responses.deleteResponse(id)))) throw notFound(id);
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
  const stored = await readable(dp, ex.ctx, id);
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
