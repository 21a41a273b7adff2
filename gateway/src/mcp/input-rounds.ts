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
import { timingSafeEqual } from 'node:crypto';
import { AgentgwError } from '../contract/index.js';
import type { EffectivePolicy } from '../policy/effective-policy.js';
import { redactToolResult } from '../policy/tool-result-pii.js';
import type { KeyHasher } from '../security/keys.js';
import type { ModernCall } from './modern-upstream.js';
import { refusedRequest } from './refusal.js';

const PURPOSE = 'mcp-request-state';
const PREFIX = 'agentgw1.';

/** What a round is bound to: the agent, the server, and the request it answered (method and upstream name or URI). */
export interface RoundBinding {
  agentId: string;
  server: string;
  method: string;
  name: string;
}

function bindingOf(b: RoundBinding, state: string): string {
  return `${b.agentId}\u0000${b.server}\u0000${b.method}\u0000${b.name}\u0000${state}`;
}

/** The upstream's state as the client receives it: `agentgw1.<state, base64url>.<HMAC>`. */
export function sealState(hasher: KeyHasher, b: RoundBinding, state: string): string {
  return `${PREFIX}${Buffer.from(state, 'utf8').toString('base64url')}.${hasher.sign(PURPOSE, bindingOf(b, state))}`;
}

/** The upstream's state inside a sealed one, or undefined when agentgw did not issue it for this binding. */
export function openState(hasher: KeyHasher, b: RoundBinding, sealed: string): string | undefined {
  if (!sealed.startsWith(PREFIX)) return undefined;
  const dot = sealed.indexOf('.', PREFIX.length);
  if (dot < 0) return undefined;
  const state = Buffer.from(sealed.slice(PREFIX.length, dot), 'base64url').toString('utf8');
  const expected = Buffer.from(hasher.sign(PURPOSE, bindingOf(b, state)));
  const given = Buffer.from(sealed.slice(dot + 1));
  return given.length === expected.length && timingSafeEqual(given, expected) ? state : undefined;
}

/**
 * A retried request's answers (PII rules applied: the upstream reads them) and state (opened), as they go upstream.
 * A state agentgw did not issue for this agent and request is refused as invalid params.
 */
export function retryParams(hasher: KeyHasher, m: ModernCall, eff: EffectivePolicy, b: RoundBinding): Record<string, unknown> {
  let state: string | undefined;
  if (m.requestState !== undefined) {
    state = openState(hasher, b, m.requestState);
    if (state === undefined) throw refusedRequest(invalidState());
  }
  return {
    ...(m.inputResponses !== undefined ? { inputResponses: redactToolResult(eff.policies, m.inputResponses).result } : {}),
    ...(state !== undefined ? { requestState: state } : {}),
  };
}

export function invalidState(): AgentgwError {
  return new AgentgwError(
    'validation_failed',
    'The requestState is not one agentgw issued for this agent and request (changed, or from another call): retry the request without inputResponses and requestState.',
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
