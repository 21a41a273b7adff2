// The 2026-07-28 revision's Mcp-Param-* headers (SEP-2243): a tool's input schema may mark a property with
// `x-mcp-header: <Name>`, and a tools/call carrying a value there must carry the header Mcp-Param-<Name> with the same
// value (plain ASCII, or `=?base64?<UTF-8 in Base64>?=`), so that intermediaries can route on it without reading the
// body. agentgw checks the client's headers against the arguments (a missing, malformed or disagreeing one is refused,
// as the upstream would), and sends the upstream headers built from the arguments it forwards, never the client's: what
// a header carries is then what the checks read in the body (PII redacted there is redacted in the header too).

/** One `x-mcp-header` declaration: where the value sits in the arguments, the header's name, the property's type. */
export interface McpParamDeclaration {
  path: string[];
  headerName: string;
  type: string | undefined;
}

const X_MCP_HEADER = 'x-mcp-header';
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64_CANONICAL = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const CANONICAL_DECIMAL = /^-?\d+(\.\d+)?$/;

const declarationsOf = new WeakMap<object, McpParamDeclaration[]>();
/** How deep (properties in properties) and how many schema nodes the declarations are looked for. */
const MAX_DEPTH = 16;
const MAX_NODES = 10_000;

/**
 * The declarations of an input schema: properties reachable from the root through `properties` only (at most 16 deep,
 * 10,000 nodes), whose `x-mcp-header` is a valid header token (others are not headers a client could send, and are
 * ignored). Cached per schema object.
 */
export function mcpParamDeclarations(inputSchema: unknown): McpParamDeclaration[] {
  if (inputSchema === null || typeof inputSchema !== 'object') return [];
  const cached = declarationsOf.get(inputSchema);
  if (cached) return cached;
  const out: McpParamDeclaration[] = [];
  // Iterative and bounded: a schema an upstream nests deep or wide cannot hold the event loop (declarations past the
  // bounds are not headers agentgw checks or sends; the upstream still checks its own).
  const stack: Array<{ node: Record<string, unknown>; path: string[] }> = [{ node: inputSchema as Record<string, unknown>, path: [] }];
  let visited = 0;
  while (stack.length > 0 && visited++ < MAX_NODES) {
    const { node, path } = stack.pop()!;
    const name = node[X_MCP_HEADER];
    if (path.length > 0 && typeof name === 'string' && TOKEN.test(name)) {
      out.push({ path, headerName: name, type: typeof node.type === 'string' ? node.type : undefined });
    }
    const props = node.properties;
    if (path.length >= MAX_DEPTH || props === null || typeof props !== 'object' || Array.isArray(props)) continue;
    for (const [key, child] of Object.entries(props as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object' && !Array.isArray(child)) stack.push({ node: child as Record<string, unknown>, path: [...path, key] });
    }
  }
  declarationsOf.set(inputSchema, out);
  return out;
}

/** The argument's value as its header carries it (strings as they are, numbers in decimal, booleans lowercase); undefined: no header. */
export function paramHeaderValue(d: McpParamDeclaration, args: unknown): string | undefined {
  let node: unknown = args;
  for (const key of d.path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  if (typeof node === 'string') return node;
  if (typeof node === 'boolean') return node ? 'true' : 'false';
  if (typeof node === 'number' && Number.isFinite(node) && (!Number.isInteger(node) || Number.isSafeInteger(node))) return String(node);
  return undefined;
}

/** A value as a header field carries it: plain printable ASCII as is, anything else in the Base64 form. */
export function encodeMcpParamValue(value: string): string {
  let plain = value.length > 0 && value === value.trim() && !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX));
  for (let i = 0; plain && i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 9 && (c < 32 || c > 126)) plain = false;
  }
  return plain ? value : `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/** A header value decoded; undefined when it has the Base64 form without canonical Base64 of valid UTF-8 inside. */
export function decodeMcpParamValue(value: string): string | undefined {
  if (!(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX) && value.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length)) return value;
  const b64 = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!BASE64_CANONICAL.test(b64)) return undefined;
  try {
    // ignoreBOM keeps a leading U+FEFF: it is part of the value, not a marker to drop.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

/**
 * Whether the client's headers agree with the arguments of its tools/call: a sentence saying what disagrees, or
 * undefined. `header(name)` reads one request header (case-insensitively), undefined when absent.
 */
export function mcpParamMismatch(declarations: readonly McpParamDeclaration[], args: unknown, header: (name: string) => string | undefined): string | undefined {
  for (const d of declarations) {
    const expected = paramHeaderValue(d, args);
    if (expected === undefined) continue;
    const name = `Mcp-Param-${d.headerName}`;
    const raw = header(name);
    if (raw === undefined) return `the arguments carry ${d.path.join('.')} but the ${name} header is absent: send it with the same value`;
    const decoded = decodeMcpParamValue(raw.replace(/^[ \t]+|[ \t]+$/g, ''));
    if (decoded === undefined) return `the ${name} header is not valid Base64 of UTF-8 inside =?base64?...?=: encode it again`;
    const numeric = (d.type === 'integer' || d.type === 'number') && CANONICAL_DECIMAL.test(decoded);
    const body = valueAt(d.path, args);
    const same = numeric && typeof body === 'number' ? Number(decoded) === body : decoded === expected;
    if (!same) return `the ${name} header says ${JSON.stringify(decoded)} but the arguments carry ${d.path.join('.')}=${JSON.stringify(body)}: send the same value in both`;
  }
  return undefined;
}

function valueAt(path: readonly string[], root: unknown): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
