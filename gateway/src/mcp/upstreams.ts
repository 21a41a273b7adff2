// The upstream MCP servers of the config, by name, and their tools read together.
import type { LoggingMessageNotification, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServersConfig } from './mcp-config.js';
import { Upstream, type UpstreamLog } from './upstream.js';

export class Upstreams {
  private readonly byName = new Map<string, Upstream>();
  /** Bumped whenever a server's tools changed: sessions holding a notification stream are told. */
  version = 0;
  /** Where the servers' log messages go (the sessions of this node). */
  onLog: ((server: string, params: LoggingMessageNotification['params']) => void) | undefined;
  /** Where the servers' notifications/resources/updated go (their upstream URI). */
  onResourceUpdated: ((server: string, uri: string) => void) | undefined;
  /** Awaited when a server listed its tools, before they are used (tool pinning). */
  onListed: ((server: string, tools: Tool[]) => Promise<void>) | undefined;
  /** Where a server's list changes go for clients of 2026-07-28 (their subscriptions/listen streams). */
  onListChanged: ((server: string, kind: 'tools' | 'prompts' | 'resources') => void) | undefined;

  constructor(configs: McpServersConfig, log?: UpstreamLog) {
    for (const [name, config] of Object.entries(configs)) {
      const toolsChanged = () => {
        this.version++;
        this.onListChanged?.(name, 'tools');
      };
      this.byName.set(name, new Upstream(name, config, toolsChanged, log, {
          log: (params) => this.onLog?.(name, params),
          resourceUpdated: (uri) => this.onResourceUpdated?.(name, uri),
          listed: async (tools) => this.onListed?.(name, tools),
          listChanged: (kind) => (kind === 'tools' ? toolsChanged() : this.onListChanged?.(name, kind)),
        }),);
    }
  }

  get(name: string): Upstream | undefined {
    return this.byName.get(name);
  }

  all(): Upstream[] {
    return [...this.byName.values()];
  }

  /**
   * Every server's tools, read concurrently (connecting on first use); a server that cannot answer lists none. For a
   * client of 2026-07-28 (`modern`), as Upstream.toolsFor serves them to it.
   */
  async tools(modern = false): Promise<Array<{ upstream: Upstream; tools: Tool[] }>> {
    const servers = this.all();
    const read = await Promise.allSettled(servers.map(async (u) => (modern ? (await u.toolsFor(true)).tools : u.listTools())));
    return servers.map((upstream, i) => {
      const r = read[i]!;
      return { upstream, tools: r.status === 'fulfilled' ? r.value : [] };
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.all().map((u) => u.close()));
  }
}
