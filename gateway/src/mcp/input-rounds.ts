// Multi-round-trip requests of the 2026-07-28 revision (SEP-2322) through agentgw: an upstream answers a tools/call,
// prompts/get or resources/read with `input_required` (requests for the client: elicitation, sampling, roots, and an
// opaque `requestState`); the client retries with `inputResponses` and the state. What crosses agentgw either way is
// what its checks read:
// - to the client: only the round's own members (resultType, inputRequests, requestState), with the agent's PII rules
//   applied to the requests' text; anything else an upstream puts there (content, structuredContent) is dropped, so a
//   round cannot carry a result past redaction and price;
// - the state: sealed by agentgw for the agent, server, method and name it was issued for (HMAC under the deployment's
//   secret), and opened on the retry: an agent cannot send an upstream a state of its own making, nor another agent's,
//   nor one from another tool;
// - to the upstream: the client's answers with the PII rules applied (redacted), and its capabilities reduced to the
//   ones the revision defines.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { AgentgwError } from '../contract/index.js';
import type { EffectivePolicy } from '../policy/effective-policy.js';
import { redactToolResult } from '../policy/tool-result-pii.js';
import type { KeyHasher } from '../security/keys.js';
import type { ModernCall } from './modern-upstream.js';
import { refusedRequest } from './refusal.js';

const PURPOSE = 'mcp-request-state';
const PREFIX = 'agentgw1.';

/**
 * What a round is bound to: the agent, the server, the request it answered (method and upstream name or URI) and that
 * request's arguments as the client sent them (a retry must send the same: it is the same call).
 */
export interface RoundBinding {
  agentId: string;
  server: string;
  method: string;
  name: string;
  /** SHA-256 of the canonical JSON of the arguments (argumentsDigest). */
  args: string;
}

/** Where an array or object ends, in argumentsDigest's walk. */
const END = Symbol('end');
/** A member name, in argumentsDigest's walk. */
class Key {
  constructor(readonly name: string) {}
}

/**
 * The digest of a request's arguments a round is bound to: every value, with each object's keys in sorted order (the
 * same arguments in another key order are the same call). Iterative: arguments nested however deep are read whole.
 */
export function argumentsDigest(args: unknown): string {
  const h = createHash('sha256');
  const stack: unknown[] = [args ?? {}];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === END) h.update(')');
    else if (v instanceof Key) h.update(`${JSON.stringify(v.name)}:`);
    else if (Array.isArray(v)) {
      h.update('[');
      stack.push(END);
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
    } else if (v !== null && typeof v === 'object') {
      h.update('{');
      stack.push(END);
      const keys = Object.keys(v).sort();
      for (let i = keys.length - 1; i >= 0; i--) stack.push((v as Record<string, unknown>)[keys[i]!], new Key(keys[i]!));
    } else h.update(`${JSON.stringify(v) ?? 'null'},`);
  }
  return h.digest('base64url');
}

function bindingOf(b: RoundBinding, state: string): string {
  return `${b.agentId}\u0000${b.server}\u0000${b.method}\u0000${b.name}\u0000${b.args}\u0000${state}`;
}

/** The upstream's state as the client receives it: `agentgw1.<state, base64url>.<HMAC>`. */
function sealState(hasher: KeyHasher, b: RoundBinding, state: string): string {
  return `${PREFIX}${Buffer.from(state, 'utf8').toString('base64url')}.${hasher.sign(PURPOSE, bindingOf(b, state))}`;
}

/** The upstream's state inside a sealed one, or undefined when agentgw did not issue it for this binding. */
function openState(hasher: KeyHasher, b: RoundBinding, sealed: string): string | undefined {
  if (!sealed.startsWith(PREFIX)) return undefined;
  const dot = sealed.indexOf('.', PREFIX.length);
  if (dot < 0) return undefined;
  const state = Buffer.from(sealed.slice(PREFIX.length, dot), 'base64url').toString('utf8');
  const expected = Buffer.from(hasher.sign(PURPOSE, bindingOf(b, state)));
  const given = Buffer.from(sealed.slice(dot + 1));
  return given.length === expected.length && timingSafeEqual(given, expected) ? state : undefined;
}

/**
 * A retried request's answers (PII rules applied: the upstream reads them) and state (opened), as they go upstream, and
 * whether it continues a round agentgw issued (a valid state: the same call, its first round admitted). A state
 * agentgw did not issue for this agent, request and arguments is refused as invalid params.
 */
export function retryParams(hasher: KeyHasher, m: ModernCall, eff: EffectivePolicy, b: RoundBinding): { params: Record<string, unknown>; continues: boolean } {
  let state: string | undefined;
  if (m.requestState !== undefined) {
    state = openState(hasher, b, m.requestState);
    if (state === undefined) throw new RoundRefused(invalidState());
  }
  const params = {
    ...(m.inputResponses !== undefined ? { inputResponses: redactToolResult(eff.policies, m.inputResponses).result } : {}),
    ...(state !== undefined ? { requestState: state } : {}),
  };
  return { params, continues: state !== undefined };
}

/** A retry refused before anything read it: a JSON-RPC error, and the refusal the call's step records. */
export class RoundRefused extends McpError {
  constructor(readonly refusal: AgentgwError) {
    const rpc = refusedRequest(refusal);
    super(rpc.code, refusal.message, rpc.data);
  }
}

function invalidState(): AgentgwError {
  return new AgentgwError(
    'validation_failed',
    'The requestState is not one agentgw issued for this agent, request and arguments (changed, or from another call): send the request again as first sent, without inputResponses and requestState.',
    { param: 'requestState' },
  );
}

/** Whether an answer asks the client for input before it can complete (an InputRequiredResult, SEP-2322). */
export function isInputRequired(result: Record<string, unknown>): boolean {
  return result.resultType === 'input_required';
}

/** An input_required answer as the client receives it: its requests (PII rules applied) and its state, sealed. */
export function inputRequiredAnswer(hasher: KeyHasher, answer: Record<string, unknown>, eff: EffectivePolicy, b: RoundBinding): Record<string, unknown> {
  const requests = answer.inputRequests;
  const state = answer.requestState;
  return {
    resultType: 'input_required',
    ...(requests !== null && typeof requests === 'object' && !Array.isArray(requests) ? { inputRequests: redactToolResult(eff.policies, requests as Record<string, unknown>).result } : {}),
    ...(typeof state === 'string' ? { requestState: sealState(hasher, b, state) } : {}),
  };
}

/** The client capabilities the revision defines, as the upstream may read them (no member of the client's own making). */
export function clientCapabilities(raw: unknown): Record<string, unknown> {
  const c = (raw !== null && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const has = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  const marks = (v: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.filter((k) => has(v[k])).map((k) => [k, {}]));
  return {
    ...(has(c.elicitation) ? { elicitation: marks(c.elicitation, ['form', 'url']) } : {}),
    ...(has(c.sampling) ? { sampling: marks(c.sampling, ['context', 'tools']) } : {}),
    ...(has(c.roots) ? { roots: c.roots.listChanged === true ? { listChanged: true } : {} } : {}),
  };
}

/**
 * A complete answer over 2026-07-28 as its method's result (the 1.x SDK's schema, which a session's answers meet): one
 * that is not is the server's failure (upstream_bad_response), never passed on or read half.
 */
export function completeAnswer<S extends z.ZodType>(schema: S, answer: Record<string, unknown>, server: string): z.infer<S> {
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw new AgentgwError('upstream_bad_response', `MCP server ${server} answered with a result of the wrong shape: retry later; if it persists, ask an admin to check the server.`);
  return parsed.data;
}
