// How /mcp says no. After auth, a refused tool call is a tool result the model can read and act on (CONTRACT), with
// agentgw's code in `_meta`; a refused list or read is a JSON-RPC error carrying the same code.
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AgentgwError } from '../contract/index.js';

export const ERROR_META_KEY = 'agentgw/error';

export function refusedCall(err: AgentgwError): CallToolResult {
  return {
    content: [{ type: 'text', text: err.message }],
    isError: true,
    _meta: { [ERROR_META_KEY]: { type: err.type, code: err.code } },
  };
}

export function refusedRequest(err: AgentgwError): McpError {
  const code = err.status === 400 ? ErrorCode.InvalidParams : err.status >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
  return new McpError(code, err.message, { [ERROR_META_KEY]: { type: err.type, code: err.code } });
}

/** CONTRACT: an unknown tool (or prompt, or resource) is JSON-RPC error -32602; a resource's names the URI asked (SEP-2164). */
export function unknownName(kind: 'tool' | 'prompt' | 'resource', name: string): McpError {
  const what = kind === 'resource' ? `Unknown resource ${name}: read one that resources/list returns (agentgw://<server>/<uri>).` : `Unknown ${kind} ${name}: call one that ${kind}s/list returns (<server>__<name>).`;
  return new McpError(ErrorCode.InvalidParams, what, kind === 'resource' ? { uri: name } : undefined);
}
