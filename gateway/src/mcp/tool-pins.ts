// MCP tool pinning: the definition of each upstream tool (description, input schema, annotations) is pinned in the
// shared database, the first one seen or one an admin accepted; a tool whose listed definition is not its pin's is
// withheld (not listed, a call refused with tool_changed) until an admin accepts it. Every node reads the same pins.
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { AgentgwError, storeUnavailableError } from '../contract/index.js';
import type { Snapshot } from '../storage/snapshot.js';
import type { McpToolPinRecord, Store } from '../storage/store.js';
import type { PinMode } from './mcp-config.js';

export type PinStore = Pick<Store, 'listMcpToolPins' | 'recordMcpToolPins'>;
export type ToolDefinition = McpToolPinRecord['definition'];
export type PinStatus = 'pinned' | 'changed' | 'new';

/** What is pinned of a tool: what the model reads and what shapes its arguments. */
export function toolDefinition(t: Tool): ToolDefinition {
  return { description: t.description ?? null, inputSchema: t.inputSchema ?? null, annotations: t.annotations ?? null };
}

/** JSON with every object's keys sorted (at any depth), so the same definition always has the same digest. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** SHA-256 (hex) of the canonical JSON of the definition. */
export function definitionDigest(d: ToolDefinition): string {
  return createHash('sha256').update(canonicalJson(d)).digest('hex');
}

/** How often a node looks whether the snapshot moved on (an accept on another node), to read the pins again. */
const WATCH_MS = 200;

function keyOf(server: string, tool: string): string {
  return `${server}\u0000${tool}`;
}

/** One tool as listed now, for the status of its name: a name listed twice with different definitions has no one digest. */
function digestsByName(tools: readonly Tool[]): Map<string, { digest: string | null; tool: Tool }> {
  const out = new Map<string, { digest: string | null; tool: Tool }>();
  for (const t of tools) {
    const digest = definitionDigest(toolDefinition(t));
    const seen = out.get(t.name);
    if (!seen) out.set(t.name, { digest, tool: t });
    else if (seen.digest !== digest) seen.digest = null;
  }
  return out;
}

export class ToolPins {
  private pins = new Map<string, McpToolPinRecord>();
  private loading: Promise<void> | undefined;
  private loadedGeneration = -1;
  private readonly timer: NodeJS.Timeout;
  /** Digests of listed definitions, by tool object: a list is hashed once, not at every check. */
  private readonly digests = new WeakMap<Tool, string>();
  private readonly repeats = new WeakMap<readonly Tool[], ReadonlySet<string>>();

  constructor(
    private readonly store: PinStore,
    private readonly snapshot: Pick<Snapshot, 'generation'>,
    private readonly modeOf: (server: string) => PinMode,
    /** The pins changed what some node may list: sessions are told. */
    private readonly onChanged: () => void,
  ) {
    this.timer = setInterval(() => {
      if (this.snapshot.generation !== this.loadedGeneration) void this.reload().catch(() => undefined);
    }, WATCH_MS);
    this.timer.unref();
  }

  /** The pins are read (once, at first use): nothing is listed or called before. */
  ready(): Promise<void> {
    if (this.loadedGeneration >= 0) return Promise.resolve();
    // Fail closed: with no pins read, nothing is listed or called.
    return this.reload().catch((e: unknown) => {
      throw storeUnavailableError('The pinned MCP tool definitions cannot be read from the database', e);
    });
  }

  /** Reads every pin again (an accept on some node moved the snapshot on); concurrent callers share one read. */
  reload(): Promise<void> {
    this.loading ??= (async () => {
      const generation = this.snapshot.generation;
      const rows = await this.store.listMcpToolPins();
      const before = this.pins;
      this.pins = new Map(rows.map((p) => [keyOf(p.server, p.tool), p]));
      this.loadedGeneration = generation;
      if (differ(before, this.pins)) this.onChanged();
    })().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  pin(server: string, tool: string): McpToolPinRecord | undefined {
    return this.pins.get(keyOf(server, tool));
  }

  /**
   * The pin a tool is served by: under pin strict only one an admin accepted (a definition pinned as first seen, while
   * the server was under pin changes, does not count there).
   */
  private servingPin(server: string, tool: string): McpToolPinRecord | undefined {
    const pin = this.pin(server, tool);
    return pin && pin.pinned_by === null && this.modeOf(server) === 'strict' ? undefined : pin;
  }

  private digestOf(t: Tool): string {
    let d = this.digests.get(t);
    if (d === undefined) {
      d = definitionDigest(toolDefinition(t));
      this.digests.set(t, d);
    }
    return d;
  }

  /** pinned: listed as pinned; changed: listed otherwise than pinned; new: no pin yet. */
  status(server: string, name: string, listed: readonly Tool[]): PinStatus {
    const pin = this.servingPin(server, name);
    if (!pin) return 'new';
    const same = listed.filter((t) => t.name === name);
    return same.length > 0 && same.every((t) => this.digestOf(t) === pin.digest) ? 'pinned' : 'changed';
  }

  /**
   * Whether the tool is held back from agents: with pin off never; otherwise unless every definition listed under its
   * name is the pinned one (a new tool of a `changes` server is pinned as it is first listed, before it is served).
   */
  withheld(server: string, tool: Tool, listed: readonly Tool[]): boolean {
    if (this.modeOf(server) === 'off') return false;
    const pin = this.servingPin(server, tool.name);
    if (!pin || this.digestOf(tool) !== pin.digest) return true;
    return this.repeatedNames(listed).has(tool.name) && listed.some((t) => t !== tool && t.name === tool.name && this.digestOf(t) !== pin.digest);
  }

  /** Names a list holds more than once (a server's lists are arrays kept as read, so each is counted once). */
  private repeatedNames(listed: readonly Tool[]): ReadonlySet<string> {
    let repeated = this.repeats.get(listed);
    if (!repeated) {
      const seen = new Set<string>();
      const twice = new Set<string>();
      for (const t of listed) (seen.has(t.name) ? twice : seen).add(t.name);
      repeated = twice;
      this.repeats.set(listed, repeated);
    }
    return repeated;
  }

  /** The tools agents may be shown and may call, of what the server lists. */
  served(server: string, listed: readonly Tool[]): Tool[] {
    if (this.modeOf(server) === 'off') return [...listed];
    return listed.filter((t) => !this.withheld(server, t, listed));
  }

  /** A call to a withheld tool is refused with tool_changed (CONTRACT), a sentence the model and the operator can act on. */
  check(server: string, tool: Tool, listed: readonly Tool[]): void {
    if (!this.withheld(server, tool, listed)) return;
    const what = this.servingPin(server, tool.name)
      ? 'its definition changed since it was pinned'
      : this.modeOf(server) === 'strict'
        ? 'this server (pin: strict) holds every tool until an admin accepts it'
        : 'its first definition is not recorded yet (retry shortly)';
    throw new AgentgwError(
      'tool_changed',
      `The tool ${tool.name} of MCP server ${server} is withheld: ${what}. An admin can review and accept it (agentgw mcp accept ${server}/${tool.name}); until then use another tool.`,
    );
  }

  /**
   * A server listed its tools: with pin `changes`, each tool not pinned yet is pinned as listed now (the first
   * definition seen; when another node pinned it first, its pin is read back and wins). Nothing is recorded otherwise.
   */
  async listed(server: string, tools: readonly Tool[]): Promise<void> {
    await this.ready();
    if (this.modeOf(server) !== 'changes' || tools.every((t) => this.pin(server, t.name))) return;
    const now = new Date().toISOString();
    const fresh: McpToolPinRecord[] = [];
    for (const [name, { digest, tool }] of digestsByName(tools)) {
      // A name listed twice with different definitions is not pinned: it stays withheld.
      if (digest === null || this.pin(server, name)) continue;
      fresh.push({ server, tool: name, digest, definition: toolDefinition(tool), pinned_at: now, pinned_by: null });
    }
    if (fresh.length === 0) return;
    const stored = await this.store.recordMcpToolPins(fresh);
    for (const p of stored) this.pins.set(keyOf(p.server, p.tool), p);
    this.onChanged();
  }

  /** An accept committed on this node: held at once, before the other nodes read it. */
  accepted(pin: McpToolPinRecord): void {
    this.pins.set(keyOf(pin.server, pin.tool), pin);
    this.onChanged();
  }
}

function differ(a: Map<string, McpToolPinRecord>, b: Map<string, McpToolPinRecord>): boolean {
  if (a.size !== b.size) return true;
  for (const [k, p] of a) if (b.get(k)?.digest !== p.digest) return true;
  return false;
}
