// How upstream names look to agents: tools and prompts as `<server>__<name>`, resource URIs as
// `agentgw://<server>/<original URI>`; policies name tools as `server/tool`.

const SEPARATOR = '__';
const RESOURCE_SCHEME = 'agentgw://';

/** `github__create_issue` for tool (or prompt) `create_issue` of server `github`. */
export function federatedName(server: string, name: string): string {
  return `${server}${SEPARATOR}${name}`;
}

/** The server and upstream name of a federated name, or null when it has no `__` (server names never hold one). */
export function splitFederatedName(name: string): { server: string; name: string } | null {
  const i = name.indexOf(SEPARATOR);
  if (i <= 0 || i + SEPARATOR.length >= name.length) return null;
  return { server: name.slice(0, i), name: name.slice(i + SEPARATOR.length) };
}

/** The tool as policies (allowed_tools), traces and usage name it. */
export function policyToolName(server: string, tool: string): string {
  return `${server}/${tool}`;
}

export function federatedUri(server: string, uri: string): string {
  return `${RESOURCE_SCHEME}${server}/${uri}`;
}

export function splitFederatedUri(uri: string): { server: string; uri: string } | null {
  if (!uri.startsWith(RESOURCE_SCHEME)) return null;
  const rest = uri.slice(RESOURCE_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return null;
  return { server: rest.slice(0, slash), uri: rest.slice(slash + 1) };
}

type ContentItem = { type: string; uri?: unknown; resource?: { uri?: unknown } };

/** A content item with its resource URI as resources/list names it (resource links and embedded resources). */
function federatedItem<C>(server: string, item: C): C {
  const c = item as ContentItem;
  if (c.type === 'resource_link' && typeof c.uri === 'string') return { ...item, uri: federatedUri(server, c.uri) };
  if (c.type === 'resource' && c.resource && typeof c.resource.uri === 'string') {
    return { ...item, resource: { ...c.resource, uri: federatedUri(server, c.resource.uri) } };
  }
  return item;
}

/** A tool result whose resource links and embedded resources name their URIs as resources/list does, so resources/read takes them. */
export function federatedToolResult<R extends { content?: unknown[] }>(server: string, r: R): R {
  return Array.isArray(r.content) ? { ...r, content: r.content.map((c) => federatedItem(server, c)) } : r;
}

/** The same for a prompt's messages. */
export function federatedPromptResult<R extends { messages: Array<{ content: unknown }> }>(server: string, r: R): R {
  return { ...r, messages: r.messages.map((m) => ({ ...m, content: federatedItem(server, m.content) })) };
}

/**
 * How one endpoint names upstream things: /mcp federates (`<server>__<name>`, `agentgw://<server>/<URI>`), /mcp/<server>
 * serves one upstream under its own names and URIs.
 */
export interface Naming {
  /** The one server served (/mcp/<server>), else undefined. */
  readonly scope: string | undefined;
  name(server: string, name: string): string;
  splitName(name: string): { server: string; name: string } | null;
  uri(server: string, uri: string): string;
  splitUri(uri: string): { server: string; uri: string } | null;
  toolResult<R extends { content?: unknown[] }>(server: string, r: R): R;
  promptResult<R extends { messages: Array<{ content: unknown }> }>(server: string, r: R): R;
  /** Whether the endpoint serves this server at all. */
  serves(server: string): boolean;
}

export const FEDERATED: Naming = {
  scope: undefined,
  name: federatedName,
  splitName: splitFederatedName,
  uri: federatedUri,
  splitUri: splitFederatedUri,
  toolResult: federatedToolResult,
  promptResult: federatedPromptResult,
  serves: () => true,
};

const single = new Map<string, Naming>();

/** The naming of /mcp/<server>: the upstream's own names and URIs. */
export function singleServerNaming(server: string): Naming {
  let n = single.get(server);
  if (!n) {
    n = {
      scope: server,
      name: (_s, name) => name,
      splitName: (name) => (name === '' ? null : { server, name }),
      uri: (_s, uri) => uri,
      splitUri: (uri) => (uri === '' ? null : { server, uri }),
      toolResult: (_s, r) => r,
      promptResult: (_s, r) => r,
      serves: (s) => s === server,
    };
    single.set(server, n);
  }
  return n;
}

/** The naming of the endpoint a caller reached: /mcp (undefined) or /mcp/<server>. */
export function namingOf(scope: string | undefined): Naming {
  return scope === undefined ? FEDERATED : singleServerNaming(scope);
}
