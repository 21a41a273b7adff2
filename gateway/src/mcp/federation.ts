// The federated catalog one agent sees: every upstream's tools, prompts and resources under agentgw's names, filtered
// by the effective policy (the agent's AND X-Agent-Policy's). Tool calls go through tool-call.ts.
import { GetPromptResultSchema, McpError, ReadResourceResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type {
  CallToolRequest,
  CallToolResult,
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  ListToolsResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  CompleteRequest,
  CompleteResult,
  LoggingLevel,
  ServerCapabilities,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ProgressCallback } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { toAgentgwError } from '../http/error-handler.js';
import { currentAgent } from '../policy/auth.js';
import { type EffectivePolicy, effectivePolicy } from '../policy/effective-policy.js';
import { policyRefusingTool, serverVisible } from '../policy/tool-allowlist.js';
import { redactToolResult } from '../policy/tool-result-pii.js';
import type { GenerationCache } from '../storage/snapshot.js';
import type { StoredAgent } from '../storage/store.js';
import type { DataPlane } from '../data-plane/data-plane.js';
import type { McpMetrics } from './mcp-metrics.js';
import { federatedUri, type Naming, namingOf, policyToolName, splitFederatedUri } from './names.js';
import { refusedRequest, unknownName } from './refusal.js';
import { argumentsDigest, completeAnswer, inputRequiredAnswer, isInputRequired, retryParams, type RoundBinding } from './input-rounds.js';
import { callTool, type McpCaller, type ToolCallDeps } from './tool-call.js';
import type { ToolPins } from './tool-pins.js';
import type { Upstream } from './upstream.js';
import type { Upstreams } from './upstreams.js';

/** How long a client's initialize waits for the upstreams to connect, to advertise what they offer. */
const CAPABILITIES_WAIT_MS = 2_000;

/** Where a tool's price is shown to agents (USD per call), beside the server's own `_meta`. */
const PRICE_META_KEY = 'agentgw/price_usd';

export class Federation {
  private readonly plans: GenerationCache<EffectivePolicy>;
  private readonly deps: ToolCallDeps;
  /**
   * Tool calls of requests without a session (the 2026-07-28 revision) in flight, by server: what the server logs
   * meanwhile may be theirs, so it is not handed to sessions that are only listening.
   */
  readonly sessionlessCalls = new Map<string, number>();
  /** Servers already waited for once on this node: a server that hangs holds one initialize (or rebuild), not each. */
  private readonly waitedFor = new Set<string>();

  constructor(
    private readonly dp: DataPlane,
    readonly upstreams: Upstreams,
    metrics: McpMetrics,
    readonly pins: ToolPins,
  ) {
    this.plans = dp.snapshot.cache(10_000);
    this.deps = { dp, upstreams, metrics, pins, effective: (agent, header) => this.effective(agent, header) };
  }

  /** The policies that apply to the agent: cached per snapshot generation, keyed by what they are made of. */
  effective(agent: StoredAgent, headerPolicyId: string | undefined): EffectivePolicy {
    const key = `${agent.tenant_id}\u0000${agent.policy_id ?? ''}\u0000${headerPolicyId ?? ''}\u0000${agent.tenant_budget?.daily_budget ?? ''}\u0000${agent.tenant_budget?.monthly_budget ?? ''}`;
    const hit = this.plans.get(key);
    if (hit) return hit;
    const eff = effectivePolicy(agent, (id) => this.dp.snapshot.policy(id), headerPolicyId);
    this.plans.set(key, eff);
    return eff;
  }

  /**
   * A client's answer to an upstream's request (a sampling result, an elicitation's content) as it may reach the upstream:
   * the agent's PII rules applied as to what upstreams answer (redacted), since the upstream reads it.
   */
  cleanForUpstream<T extends Record<string, unknown>>(caller: McpCaller, answer: T): T {
    return redactToolResult(this.policiesOf(caller).policies, answer).result;
  }

  /** The agent as the snapshot knows it now and its policies; a refusal (suspended, foreign X-Agent-Policy) is a JSON-RPC error. */
  private policiesOf(caller: McpCaller): EffectivePolicy {
    try {
      return this.effective(currentAgent(caller.agent, this.dp.snapshot), caller.headerPolicyId);
    } catch (e) {
      throw refusedRequest(toAgentgwError(e));
    }
  }

  callTool(caller: McpCaller, params: CallToolRequest['params'], signal?: AbortSignal, onprogress?: ProgressCallback): Promise<CallToolResult> {
    return callTool(this.deps, caller, params, signal, onprogress);
  }

  /**
   * What /mcp offers besides tools, resources and prompts: logging, when some server offers it (as connected now; with
   * `connect`, every server is connected first, as for a client's initialize).
   */
  async capabilities(connect: boolean, scope?: string): Promise<ServerCapabilities> {
    const naming = namingOf(scope);
    const servers = this.upstreams.all().filter((u) => naming.serves(u.name));
    if (connect) {
      const connected = Promise.allSettled(servers.map((u) => u.connection()));
      // A server slow to connect does not hold the client's initialize longer than this, and only the first time on
      // this node: later it counts once connected.
      const unwaited = servers.filter((u) => !this.waitedFor.has(u.name));
      if (unwaited.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        const patience = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, CAPABILITIES_WAIT_MS);
        });
        await Promise.race([connected, patience]);
        clearTimeout(timer);
        for (const u of unwaited) this.waitedFor.add(u.name);
      }
    }
    const caps: ServerCapabilities = {};
    for (const u of servers) {
      const c = u.capabilities;
      if (c?.logging) caps.logging = {};
      if (c?.completions) caps.completions = {};
      if (c?.resources?.subscribe) caps.resources = { listChanged: true, subscribe: true };
    }
    return caps;
  }

  /** completion/complete: relayed to the server of the prompt (`<server>__<prompt>`) or resource template (`agentgw://<server>/...`). */
  async complete(caller: McpCaller, params: CompleteRequest['params'], signal?: AbortSignal): Promise<CompleteResult> {
    const eff = this.policiesOf(caller);
    const ref = params.ref;
    const naming = namingOf(caller.scope);
    const split = ref.type === 'ref/prompt' ? naming.splitName(ref.name) : naming.splitUri(ref.uri);
    const upstream = split ? this.upstreams.get(split.server) : undefined;
    const kind = ref.type === 'ref/prompt' ? 'prompt' : 'resource';
    const name = ref.type === 'ref/prompt' ? ref.name : ref.uri;
    if (!split || !upstream || !serverVisible(eff.policies, upstream.name)) throw unknownName(kind, name);
    const upstreamRef = ref.type === 'ref/prompt' ? { ...ref, name: (split as { name: string }).name } : { ...ref, uri: (split as { uri: string }).uri };
    return this.upstreamCall(() => upstream.request((c, o) => c.complete({ ...params, ref: upstreamRef }, o), signal));
  }

  /** Sessions of this node subscribed to each resource (its federated URI): the upstream is subscribed while one is. */
  private readonly subscribers = new Map<string, Set<string>>();

  /** The sessions of this node subscribed to the resource (federated URI). */
  subscribersOf(uri: string): ReadonlySet<string> {
    return this.subscribers.get(uri) ?? new Set();
  }

  /** resources/subscribe: the upstream is subscribed (once per node) and the session noted. */
  async subscribe(caller: McpCaller, asked: string, signal?: AbortSignal): Promise<void> {
    const eff = this.policiesOf(caller);
    const split = namingOf(caller.scope).splitUri(asked);
    const upstream = split ? this.upstreams.get(split.server) : undefined;
    if (!split || !upstream || !serverVisible(eff.policies, upstream.name)) throw unknownName('resource', asked);
    const uri = federatedUri(upstream.name, split.uri);
    let set = this.subscribers.get(uri);
    if (!set) {
      await this.upstreamCall(() => upstream.request((c, o) => c.subscribeResource({ uri: split.uri }, o), signal));
      set = this.subscribers.get(uri) ?? new Set();
      this.subscribers.set(uri, set);
    }
    set.add(caller.sessionId);
  }

  /** resources/unsubscribe (or the session ended): the upstream is unsubscribed when no session of this node holds it. */
  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    const set = this.subscribers.get(uri);
    if (!set?.delete(sessionId) || set.size > 0) return;
    this.subscribers.delete(uri);
    const split = splitFederatedUri(uri);
    const upstream = split ? this.upstreams.get(split.server) : undefined;
    if (split && upstream) await upstream.request((c, o) => c.unsubscribeResource({ uri: split.uri }, o)).catch(() => undefined);
  }

  /** Every subscription of a session that ended. */
  forget(sessionId: string): void {
    for (const [uri, set] of this.subscribers) if (set.has(sessionId)) void this.unsubscribe(sessionId, uri);
  }

  /** logging/setLevel: the level is set on every server the caller sees that offers logging (those that fail are skipped). */
  async setLoggingLevel(caller: McpCaller, level: LoggingLevel, signal?: AbortSignal): Promise<void> {
    const eff = this.policiesOf(caller);
    const naming = namingOf(caller.scope);
    const servers = this.upstreams.all().filter((u) => naming.serves(u.name) && serverVisible(eff.policies, u.name));
    await Promise.allSettled(servers.map(async (u) => {
      await u.connection();
      if (u.capabilities?.logging) await u.request((c, o) => c.setLoggingLevel(level, o), signal);
    }));
  }

  /** Whether the caller sees the server (some allowed_tools glob names it). */
  sees(caller: McpCaller, server: string): boolean {
    try {
      return namingOf(caller.scope).serves(server) && serverVisible(this.effective(currentAgent(caller.agent, this.dp.snapshot), caller.headerPolicyId).policies, server);
    } catch {
      return false;
    }
  }

  /** The tools the policies allow, from every server that answers. */
  async listTools(caller: McpCaller): Promise<ListToolsResult> {
    const eff = this.policiesOf(caller);
    const naming = namingOf(caller.scope);
    const catalog = await this.catalogOf(caller, naming);
    await this.pins.ready().catch((e: unknown) => {
      throw refusedRequest(toAgentgwError(e));
    });
    // New tools a failed recording left unpinned are recorded now (a no-op when every tool has its pin).
    await Promise.allSettled(catalog.map((c) => this.pins.listed(c.upstream.name, c.tools)));
    return { tools: allowedTools(eff, naming, this.servedOf(catalog)) };
  }

  /**
   * Every server's tools the endpoint serves, read concurrently (a server that cannot answer lists none): for a client
   * of the 2026-07-28 revision, over that revision from the servers that serve it.
   */
  private async catalogOf(caller: McpCaller, naming: Naming): Promise<Array<{ upstream: Upstream; tools: Tool[] }>> {
    return (await this.upstreams.tools(caller.modern !== undefined)).filter((c) => naming.serves(c.upstream.name));
  }

  /**
   * The listed definition of the tool a tools/call names (as tools/list would serve it to the caller, before policies),
   * or undefined: to check the 2026-07-28 revision's Mcp-Param-* headers against its input schema.
   */
  async toolDefinition(caller: McpCaller, name: string): Promise<Tool | undefined> {
    const split = namingOf(caller.scope).splitName(name);
    const upstream = split ? this.upstreams.get(split.server) : undefined;
    // Only a tool the caller may call: the headers of others tell nothing about them.
    if (!split || !upstream || policyRefusingTool(this.policiesOf(caller).policies, policyToolName(split.server, split.name))) return undefined;
    return (await upstream.toolsFor(caller.modern !== undefined)).tools.find((t) => t.name === split.name);
  }

  /** Each server's tools without those tool pinning withholds. */
  private servedOf(catalog: Array<{ upstream: Upstream; tools: Tool[] }>): Array<{ upstream: Upstream; tools: Tool[] }> {
    return catalog.map(({ upstream, tools }) => ({ upstream, tools: this.pins.served(upstream.name, tools) }));
  }

  /**
   * The names of the tools the caller may call, from what the servers last listed (connecting none): what a session
   * was shown, to tell whether a policy or a server change altered it. Null when the agent can no longer call anything.
   */
  visibleTools(caller: McpCaller): string | null {
    let eff: EffectivePolicy;
    try {
      eff = this.effective(currentAgent(caller.agent, this.dp.snapshot), caller.headerPolicyId);
    } catch {
      return null;
    }
    const naming = namingOf(caller.scope);
    const cached = this.upstreams.all().filter((u) => naming.serves(u.name)).map((upstream) => ({ upstream, tools: upstream.cachedTools ?? [] }));
    // The upstream's own tool objects, renamed: their definition keys are computed once, not at every comparison.
    return signature(allowedEntries(eff, naming, this.servedOf(cached)).map((e) => `${e.name}\u0000${definitionKey(e.tool)}`));
  }

  /** The servers whose resources and prompts the caller sees (named by some allowed_tools glob of every policy). */
  visibleServers(caller: McpCaller): string | null {
    try {
      const eff = this.effective(currentAgent(caller.agent, this.dp.snapshot), caller.headerPolicyId);
      const naming = namingOf(caller.scope);
      return signature(this.upstreams.all().filter((u) => naming.serves(u.name) && serverVisible(eff.policies, u.name)).map((u) => u.name));
    } catch {
      return null;
    }
  }

  /** Visible servers that are connected (or connect now) and offer `what`; one that cannot be reached is left out. */
  private async offering(caller: McpCaller, what: 'resources' | 'prompts'): Promise<Upstream[]> {
    const eff = this.policiesOf(caller);
    const naming = namingOf(caller.scope);
    const visible = this.upstreams.all().filter((u) => naming.serves(u.name) && serverVisible(eff.policies, u.name));
    const ready = await Promise.allSettled(visible.map((u) => u.connection()));
    return visible.filter((u, i) => ready[i]!.status === 'fulfilled' && u.offers(what));
  }

  private async fromEach<T, I>(servers: Upstream[], read: (u: Upstream) => Promise<I[]>, map: (u: Upstream, item: I) => T): Promise<T[]> {
    const lists = await Promise.allSettled(servers.map(read));
    return servers.flatMap((u, i) => {
      const r = lists[i]!;
      return r.status === 'fulfilled' ? r.value.map((item) => map(u, item)) : [];
    });
  }

  async listResources(caller: McpCaller): Promise<ListResourcesResult> {
    const servers = await this.offering(caller, 'resources');
    const resources = await this.fromEach<Resource, Resource>(
      servers,
      (u) => u.listAll(async (c, cursor, o) => {
        const r = await c.listResources(cursor ? { cursor } : undefined, o);
        return { items: r.resources, nextCursor: r.nextCursor };
      }),
      (u, r) => ({ ...r, uri: namingOf(caller.scope).uri(u.name, r.uri) }),
    );
    return { resources };
  }

  async listResourceTemplates(caller: McpCaller): Promise<ListResourceTemplatesResult> {
    const servers = await this.offering(caller, 'resources');
    const resourceTemplates = await this.fromEach<ResourceTemplate, ResourceTemplate>(
      servers,
      (u) => u.listAll(async (c, cursor, o) => {
        const r = await c.listResourceTemplates(cursor ? { cursor } : undefined, o);
        return { items: r.resourceTemplates, nextCursor: r.nextCursor };
      }),
      (u, t) => ({ ...t, uriTemplate: namingOf(caller.scope).uri(u.name, t.uriTemplate) }),
    );
    return { resourceTemplates };
  }

  async readResource(caller: McpCaller, uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const eff = this.policiesOf(caller);
    const naming = namingOf(caller.scope);
    const split = naming.splitUri(uri);
    const upstream = split ? this.upstreams.get(split.server) : undefined;
    if (!split || !upstream || !serverVisible(eff.policies, upstream.name)) throw unknownName('resource', uri);
    const channel = caller.modern ? await this.upstreamCall(() => upstream.modern()) : null;
    let r: ReadResourceResult;
    try {
      if (channel && caller.modern) {
        const round: RoundBinding = { agentId: caller.agent.id, server: upstream.name, method: 'resources/read', name: split.uri, args: '' };
        const params = { uri: split.uri, ...retryParams(this.dp.hasher, caller.modern, eff, round).params };
        const answer = await this.upstreamCall(() => upstream.modernRequest(channel, 'resources/read', params, caller.modern!.envelope, { signal }));
        if (isInputRequired(answer)) return inputRequiredAnswer(this.dp.hasher, answer, eff, round) as ReadResourceResult;
        r = await this.upstreamCall(async () => completeAnswer(ReadResourceResultSchema, answer, upstream.name));
      } else {
        r = await this.upstreamCall(() => upstream.request((c, o) => c.readResource({ uri: split.uri }, o), signal));
      }
    } catch (e) {
      // The server's "not found" names the URI it was asked (SEP-2164: in data.uri): the agent is told the one it asked.
      const data = e instanceof McpError ? (e.data as { uri?: unknown } | undefined) : undefined;
      if (data && typeof data === 'object' && data.uri === split.uri) (e as McpError & { data: unknown }).data = { ...data, uri };
      throw e;
    }
    const contents = r.contents.map((c) => ({ ...c, uri: naming.uri(upstream.name, c.uri) }));
    return redactToolResult(eff.policies, { ...r, contents }).result;
  }

  async listPrompts(caller: McpCaller): Promise<ListPromptsResult> {
    const servers = await this.offering(caller, 'prompts');
    const prompts = await this.fromEach<Prompt, Prompt>(
      servers,
      (u) => u.listAll(async (c, cursor, o) => {
        const r = await c.listPrompts(cursor ? { cursor } : undefined, o);
        return { items: r.prompts, nextCursor: r.nextCursor };
      }),
      (u, p) => ({ ...p, name: namingOf(caller.scope).name(u.name, p.name) }),
    );
    return { prompts };
  }

  async getPrompt(caller: McpCaller, name: string, args: Record<string, string> | undefined, signal?: AbortSignal): Promise<GetPromptResult> {
    const eff = this.policiesOf(caller);
    const naming = namingOf(caller.scope);
    const split = naming.splitName(name);
    const upstream = split ? this.upstreams.get(split.server) : undefined;
    if (!split || !upstream || !serverVisible(eff.policies, upstream.name)) throw unknownName('prompt', name);
    const channel = caller.modern ? await this.upstreamCall(() => upstream.modern()) : null;
    let r: GetPromptResult;
    if (channel && caller.modern) {
      const round: RoundBinding = { agentId: caller.agent.id, server: upstream.name, method: 'prompts/get', name: split.name, args: argumentsDigest(args) };
      const params = { name: split.name, ...(args ? { arguments: args } : {}), ...retryParams(this.dp.hasher, caller.modern, eff, round).params };
      const answer = await this.upstreamCall(() => upstream.modernRequest(channel, 'prompts/get', params, caller.modern!.envelope, { signal }));
      if (isInputRequired(answer)) return inputRequiredAnswer(this.dp.hasher, answer, eff, round) as GetPromptResult;
      r = await this.upstreamCall(async () => completeAnswer(GetPromptResultSchema, answer, upstream.name));
    } else {
      r = await this.upstreamCall(() => upstream.request((c, o) => c.getPrompt({ name: split.name, arguments: args }, o), signal));
    }
    return redactToolResult(eff.policies, naming.promptResult(upstream.name, r)).result;
  }

  /** An upstream that cannot be reached fails a read or a prompt with a JSON-RPC error naming upstream_unavailable. */
  private async upstreamCall<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      if (e instanceof McpError) throw e;
      throw refusedRequest(toAgentgwError(e));
    }
  }
}

/** The tools every policy allows, named as the endpoint names them (`<server>__<tool>` on /mcp), with their price (if any) in `_meta`. */
function allowedTools(eff: EffectivePolicy, naming: Naming, catalog: Array<{ upstream: Upstream; tools: Tool[] }>): Tool[] {
  return allowedEntries(eff, naming, catalog).map(({ upstream, tool: t, name }) => {
    const price = upstream.priceOf(t.name);
    return { ...t, name, ...(price > 0 ? { _meta: { ...t._meta, [PRICE_META_KEY]: price } } : {}) };
  });
}

/** The upstream tools every policy allows, with the name the endpoint gives each. */
function allowedEntries(eff: EffectivePolicy, naming: Naming, catalog: Array<{ upstream: Upstream; tools: Tool[] }>): Array<{ upstream: Upstream; tool: Tool; name: string }> {
  const out: Array<{ upstream: Upstream; tool: Tool; name: string }> = [];
  for (const { upstream, tools } of catalog) {
    for (const tool of tools) {
      if (policyRefusingTool(eff.policies, policyToolName(upstream.name, tool.name))) continue;
      out.push({ upstream, tool, name: naming.name(upstream.name, tool.name) });
    }
  }
  return out;
}

/** Each listed tool's definition as a signature compares it, computed once per tool object (sessions compare often). */
const definitionKeys = new WeakMap<Tool, string>();

function definitionKey(t: Tool): string {
  let key = definitionKeys.get(t);
  if (key === undefined) {
    key = JSON.stringify([t.description, t.inputSchema, t.annotations, t.outputSchema]);
    definitionKeys.set(t, key);
  }
  return key;
}

/** What a session was shown of its tools: names and definitions (a description or schema that changed is a changed list too). */
export function toolsSignature(tools: readonly Tool[]): string {
  return signature(tools.map((t) => `${t.name}\u0000${definitionKey(t)}`));
}

function signature(names: string[]): string {
  return names.sort().join('\n');
}
