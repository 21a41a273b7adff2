// Who may reach /mcp from a browser: the Origin of a request must be the gateway's own or one of mcp.allowed_origins
// (no Origin, as agents and CLIs send, is allowed), and on a gateway bound to loopback the Host must name loopback too,
// so a page whose DNS name was rebound to 127.0.0.1 cannot reach it.
import { AgentgwError } from '../contract/index.js';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** A host name (or listen host) that is the loopback interface. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_NAMES.has(h) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h.endsWith('.localhost');
}

/** The host name of a Host header (`name[:port]`, `[v6]:port`), lowercase. */
function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.lastIndexOf(':');
  return colon >= 0 ? h.slice(0, colon) : h;
}

export interface OriginRules {
  /** mcp.allowed_origins: origins other than the gateway's own whose pages may call /mcp ("*": any). */
  allowedOrigins: readonly string[];
  /** The gateway listens on loopback only: Hosts other than loopback names (or an allowed origin's host) are refused. */
  loopbackListen: boolean;
}

export class OriginCheck {
  private readonly any: boolean;
  private readonly origins: Set<string>;
  private readonly hosts: Set<string>;

  constructor(private readonly rules: OriginRules) {
    this.any = rules.allowedOrigins.includes('*');
    const urls = rules.allowedOrigins.filter((o) => o !== '*').map((o) => new URL(o));
    this.origins = new Set(urls.map((u) => u.origin));
    this.hosts = new Set(urls.map((u) => u.host.toLowerCase()));
  }

  /** Throws origin_not_allowed (403) for a refused Origin or Host. */
  check(origin: string | undefined, host: string | undefined): void {
    if (this.rules.loopbackListen && host !== undefined && !isLoopbackHost(hostName(host)) && !this.hosts.has(host.trim().toLowerCase())) {
      throw new AgentgwError(
        'origin_not_allowed',
        `Host ${JSON.stringify(host.slice(0, 100))} is not this gateway's: it listens on loopback, so call it as localhost or 127.0.0.1 (or add the origin to mcp.allowed_origins).`,
      );
    }
    if (origin === undefined || this.any) return;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    // Same origin: the page was served by this gateway (its Origin names the Host the request was sent to).
    if (parsed && host !== undefined && parsed.host.toLowerCase() === host.trim().toLowerCase()) return;
    if (parsed && this.origins.has(parsed.origin)) return;
    throw new AgentgwError(
      'origin_not_allowed',
      `Origin ${JSON.stringify(origin.slice(0, 200))} may not call /mcp: only the gateway's own pages and mcp.allowed_origins may; ask an admin to add it.`,
    );
  }
}
