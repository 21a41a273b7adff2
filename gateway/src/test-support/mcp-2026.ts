// Requests of the MCP 2026-07-28 revision as its wire has them (raw HTTP): for the tests of stateless /mcp.

export const REVISION = '2026-07-28';
export const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': REVISION, 'io.modelcontextprotocol/clientCapabilities': {} };

export interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** One request of the revision; the answer as JSON or an SSE stream, read whole: its messages, the response last. */
export async function rpc(url: string, key: string | undefined, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      'mcp-method': method,
      ...(name !== undefined ? { 'mcp-name': name } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: { ...ENVELOPE, ...(params._meta as object | undefined) } } }),
  });
  const text = await res.text();
  const messages: Message[] = (res.headers.get('content-type') ?? '').startsWith('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data:') && l.length > 5).map((l) => JSON.parse(l.slice(5)) as Message)
    : text ? [JSON.parse(text) as Message] : [];
  const response = messages.find((m) => m.id === 7 && (m.result !== undefined || m.error !== undefined));
  return { status: res.status, headers: res.headers, messages, response, text };
}

export const errorMeta = (r: Record<string, unknown> | undefined) => (r?._meta as Record<string, unknown> | undefined)?.['agentgw/error'] as { type: string; code: string } | undefined;
export const textOf = (r: Record<string, unknown> | undefined) => ((r?.content as Array<{ type: string; text?: string }> | undefined) ?? []).map((c) => c.text ?? '').join('');
